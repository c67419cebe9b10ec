/* Bracketed trees read in one pass over the bytes: the columns of metametric_jax.tasks.readers.ptb.Treebank.
 *
 * scan(data, lines, per_tree) reads well-formed text only and returns its columns; any text it does not read as
 * well-formed (an error, or a layout it leaves to the NumPy reader) gives an int instead, and the caller reads the
 * text with the NumPy reader, which words the error. The columns are those of that reader, byte for byte.
 *
 * Layouts: per line (per_tree == 0), every line is a sentence, a tree must not span lines, sentences are the first
 * `lines` lines (lines >= 0) or up to the line of the last tree; per tree (per_tree == 1), every tree is a sentence,
 * wherever its lines are. A tree that is a part-of-speech node alone is left to the NumPy reader.
 *
 * Returns (columns, offsets, leaves, nodes, sentences): `columns` a bytearray of int64 rows of `capacity` (the count
 * of '(') cells each: tag_start, tag_end, word_start, word_end (the first `leaves` cells), node_sentence,
 * label_start, label_end, first, last (the first `nodes` cells), line (the first `sentences` cells, per tree only);
 * `offsets` a bytearray of `sentences + 1` int64, the leaf offsets of the sentences. Or an int: 1 for text to read
 * with the NumPy reader, 2 (per line) for a tree over several lines.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { ROWS = 10, TAG_START = 0, TAG_END, WORD_START, WORD_END, NODE_SENTENCE, LABEL_START, LABEL_END, FIRST, LAST,
       LINE };
enum { LEFT_TO_NUMPY = 1, SPANS_LINES = 2 };

/* 1 for white space as C isspace() has it (9-13 and 32), 2 for a parenthesis, 0 for a byte of a token */
static unsigned char kind[256];

static int is_token(unsigned char c) { return kind[c] == 0; }

typedef struct {
    const unsigned char *d;
    Py_ssize_t n;
    int per_tree;
    int64_t line;  /* 0-based line of the byte being read */
} Text;

/* the index of the first byte from i on that is not white space; -1 for a newline inside a tree read per line */
static Py_ssize_t skip_space(Text *t, Py_ssize_t i) {
    while (i < t->n && kind[t->d[i]] == 1) {
        if (t->d[i] == '\n') {
            if (!t->per_tree) return -1;
            t->line++;
        }
        i++;
    }
    return i;
}

static int64_t count_opens(const unsigned char *d, Py_ssize_t n, int64_t *newlines) {
    int64_t opens = 0, nl = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        opens += d[i] == '(';
        nl += d[i] == '\n';
    }
    *newlines = nl;
    return opens;
}

static PyObject *scan(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "scan(data, lines, per_tree) takes 3 arguments");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    int64_t lines = PyLong_AsLongLong(args[1]);
    int per_tree = PyObject_IsTrue(args[2]);
    if ((lines == -1 && PyErr_Occurred()) || per_tree < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Text t = {(const unsigned char *)view.buf, view.len, per_tree, 0};
    int64_t newlines;
    int64_t capacity = count_opens(t.d, t.n, &newlines);
    int64_t max_sentences = per_tree ? capacity : (lines >= 0 ? lines : newlines + 1);
    if (capacity < 1) capacity = 1;
    PyObject *columns = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(ROWS * capacity * 8));
    PyObject *offsets_obj = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((max_sentences + 1) * 8));
    int64_t *stack = PyMem_Malloc((size_t)capacity * sizeof(int64_t));
    PyObject *result = NULL;
    if (columns == NULL || offsets_obj == NULL || stack == NULL) {
        if (stack == NULL) PyErr_NoMemory();
        goto done;
    }
    int64_t *col[ROWS];
    for (int r = 0; r < ROWS; r++) col[r] = (int64_t *)PyByteArray_AS_STRING(columns) + r * capacity;
    int64_t *offsets = (int64_t *)PyByteArray_AS_STRING(offsets_obj);

    const unsigned char *d = t.d;
    Py_ssize_t n = t.n, i = 0;
    int64_t depth = 0, leaves = 0, nodes = 0, sentence = -1, base = 0;
    int code = 0;
    while (i < n) {
        unsigned char c = d[i];
        if (c == '(') {
            if (depth == 0) { /* a tree opens: a new sentence per tree, or that of its line */
                int64_t s = per_tree ? sentence + 1 : t.line;
                if (s >= max_sentences) {
                    code = LEFT_TO_NUMPY;
                    break;
                }
                while (sentence < s) offsets[++sentence] = leaves;
                if (per_tree) col[LINE][s] = t.line + 1;
                base = offsets[sentence];
            }
            Py_ssize_t label_end = i + 1;
            while (label_end < n && is_token(d[label_end])) label_end++;
            int labelled = label_end > i + 1;
            Py_ssize_t k = skip_space(&t, label_end);
            if (k < 0) {
                code = SPANS_LINES;
                break;
            }
            if (k >= n || d[k] == ')') { /* a node without children, or an unclosed '(' */
                code = LEFT_TO_NUMPY;
                break;
            }
            if (d[k] == '(') { /* a phrase */
                col[NODE_SENTENCE][nodes] = sentence;
                col[LABEL_START][nodes] = i + 1; /* an unlabelled node's label is empty there */
                col[LABEL_END][nodes] = labelled ? label_end : i + 1;
                col[FIRST][nodes] = leaves - base;
                stack[depth++] = nodes++;
                i = k;
                continue;
            }
            /* a part of speech: its tag, a word, ')' */
            if (!labelled || depth == 0) {
                code = LEFT_TO_NUMPY;
                break;
            }
            Py_ssize_t word_end = k;
            while (word_end < n && is_token(d[word_end])) word_end++;
            Py_ssize_t close = skip_space(&t, word_end);
            if (close < 0) {
                code = SPANS_LINES;
                break;
            }
            if (close >= n || d[close] != ')') {
                code = LEFT_TO_NUMPY;
                break;
            }
            col[TAG_START][leaves] = i + 1;
            col[TAG_END][leaves] = label_end;
            col[WORD_START][leaves] = k;
            col[WORD_END][leaves] = word_end;
            leaves++;
            i = close + 1;
            continue;
        }
        if (c == ')') {
            if (depth == 0) {
                code = LEFT_TO_NUMPY;
                break;
            }
            col[LAST][stack[--depth]] = leaves - base;
            i++;
            continue;
        }
        if (kind[c] == 1) {
            if (c == '\n') {
                if (depth && !per_tree) {
                    code = SPANS_LINES;
                    break;
                }
                t.line++;
            }
            i++;
            continue;
        }
        code = LEFT_TO_NUMPY; /* a word outside a part of speech, or text outside any tree */
        break;
    }
    if (code == 0 && depth != 0) code = LEFT_TO_NUMPY;
    if (code) {
        result = PyLong_FromLong(code);
        goto done;
    }
    int64_t sentences = per_tree ? sentence + 1 : (lines >= 0 ? lines : sentence + 1);
    while (sentence < sentences) offsets[++sentence] = leaves;
    result = Py_BuildValue("(OOLLL)", columns, offsets_obj, (long long)leaves, (long long)nodes,
                           (long long)sentences);
done:
    PyMem_Free(stack);
    Py_XDECREF(columns);
    Py_XDECREF(offsets_obj);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scan, METH_FASTCALL,
     "scan(data, lines, per_tree): the columns of well-formed bracketed trees, or an int (see the module)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ptb_scan", "Bracketed trees read in one pass over the bytes.", -1, methods,
};

PyMODINIT_FUNC PyInit__ptb_scan(void) {
    memset(kind, 0, sizeof kind);
    kind[9] = kind[10] = kind[11] = kind[12] = kind[13] = kind[32] = 1;
    kind['('] = kind[')'] = 2;
    return PyModule_Create(&module);
}
