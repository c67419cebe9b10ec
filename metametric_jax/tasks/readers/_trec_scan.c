/* The fields of a plain TREC run or qrels text in one pass over its bytes: metametric_jax.tasks.readers.trec.
 *
 * fields(data, width): the fields of ASCII text whose every non-blank line has `width` of them, as str.split() splits
 * each line (white space: bytes 9-13 and 28-32), or None where the text is not plain: another control character, a
 * line of another number of fields, a field of more than 64 bytes, a line that starts with '#'. Returns
 * (buffer, count, capacity): `buffer` a bytearray of 2 * capacity int64, the fields' start offsets first, their end
 * offsets from `capacity` on, `count` fields each (in order, `width` a line).
 *
 * chars(data, buffer, count, capacity, width, k, multiple): the bytes of the k-th field of each line, NUL-padded to a
 * common width (the longest field's, at least 1, rounded up to a multiple of `multiple`): (bytearray, width).
 *
 * numbers(data, buffer, count, capacity, width, k): float() of the k-th field of each line, bit for bit (Python's own
 * conversion), as a bytearray of float64; None where a field is not a decimal number in ASCII with an optional
 * exponent ([+-]?([0-9]+.?[0-9]*|.[0-9]+)([eE][+-]?[0-9]+)?).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define WIDEST 64

static PyObject *fields(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "fields(data, width) takes 2 arguments");
        return NULL;
    }
    Py_ssize_t width = PyLong_AsSsize_t(args[1]);
    if (width == -1 && PyErr_Occurred()) return NULL;
    if (width < 1) {
        PyErr_SetString(PyExc_ValueError, "width must be at least 1");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *d = view.buf;
    Py_ssize_t n = view.len, lines = 1;
    for (Py_ssize_t i = 0; i < n; i++) lines += d[i] == '\n';
    Py_ssize_t capacity = lines * width;
    PyObject *buffer = PyByteArray_FromStringAndSize(NULL, 2 * capacity * (Py_ssize_t)sizeof(int64_t));
    if (buffer == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    int64_t *start = (int64_t *)PyByteArray_AS_STRING(buffer), *end = start + capacity;
    Py_ssize_t count = 0, line = 0, row_line = -1, i = 0;
    int plain = 1;
    while (i < n && plain) {
        unsigned char c = d[i];
        if (c <= 32) {
            if (c < 9 || (c > 13 && c < 28)) plain = 0; /* a control character str.split() keeps in a field */
            line += c == '\n';
            i++;
            continue;
        }
        Py_ssize_t j = i + 1;
        while (j < n && d[j] > 32) j++;
        if (j - i > WIDEST || count == capacity) {
            plain = 0;
            break;
        }
        if (count % width == 0) { /* a line's first field: on a line after the last one's, not a comment */
            if (c == '#' || line <= row_line) plain = 0;
            row_line = line;
        } else if (line != row_line) {
            plain = 0; /* a line of fewer fields */
        }
        start[count] = i;
        end[count] = j;
        count++;
        i = j;
    }
    PyBuffer_Release(&view);
    if (!plain || count % width) {
        Py_DECREF(buffer);
        Py_RETURN_NONE;
    }
    PyObject *result = Py_BuildValue("(Onn)", buffer, count, capacity);
    Py_DECREF(buffer);
    return result;
}

/* the arguments shared by chars and numbers: data, buffer, count, capacity, width, k */
typedef struct {
    Py_buffer data, bounds;
    Py_ssize_t capacity, count, width, k;
    const int64_t *start, *end;
} Column;

static int column_of(PyObject *const *args, Column *c) {
    c->data.obj = c->bounds.obj = NULL;
    Py_ssize_t *numbers[] = {&c->count, &c->capacity, &c->width, &c->k};
    for (int a = 0; a < 4; a++) {
        *numbers[a] = PyLong_AsSsize_t(args[2 + a]);
        if (*numbers[a] == -1 && PyErr_Occurred()) return -1;
    }
    if (PyObject_GetBuffer(args[0], &c->data, PyBUF_SIMPLE) < 0) return -1;
    if (PyObject_GetBuffer(args[1], &c->bounds, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&c->data);
        return -1;
    }
    if (c->width < 1 || c->k < 0 || c->k >= c->width || c->count < 0 || c->count > c->capacity ||
        c->count % c->width || c->bounds.len < 2 * c->capacity * (Py_ssize_t)sizeof(int64_t)) {
        PyBuffer_Release(&c->data);
        PyBuffer_Release(&c->bounds);
        PyErr_SetString(PyExc_ValueError, "not the buffer of fields(): capacity, count, width or k out of range");
        return -1;
    }
    c->start = (const int64_t *)c->bounds.buf;
    c->end = c->start + c->capacity;
    for (Py_ssize_t f = c->k; f < c->count; f += c->width) {
        if (c->start[f] < 0 || c->end[f] < c->start[f] || c->end[f] > c->data.len) {
            PyBuffer_Release(&c->data);
            PyBuffer_Release(&c->bounds);
            PyErr_SetString(PyExc_ValueError, "a field outside the data");
            return -1;
        }
    }
    return 0;
}

static void release(Column *c) {
    PyBuffer_Release(&c->data);
    PyBuffer_Release(&c->bounds);
}

static PyObject *chars(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "chars(data, buffer, count, capacity, width, k, multiple) takes 7 arguments");
        return NULL;
    }
    Py_ssize_t multiple = PyLong_AsSsize_t(args[6]);
    if (multiple == -1 && PyErr_Occurred()) return NULL;
    if (multiple < 1) {
        PyErr_SetString(PyExc_ValueError, "multiple must be at least 1");
        return NULL;
    }
    Column c;
    if (column_of(args, &c) < 0) return NULL;
    Py_ssize_t longest = 1;
    for (Py_ssize_t f = c.k; f < c.count; f += c.width)
        if (c.end[f] - c.start[f] > longest) longest = c.end[f] - c.start[f];
    Py_ssize_t w = (longest + multiple - 1) / multiple * multiple, rows = c.count / c.width;
    PyObject *out = PyByteArray_FromStringAndSize(NULL, rows * w);
    if (out != NULL) {
        char *o = PyByteArray_AS_STRING(out);
        const char *d = c.data.buf;
        for (Py_ssize_t r = 0, f = c.k; r < rows; r++, f += c.width, o += w) {
            Py_ssize_t len = c.end[f] - c.start[f];
            memcpy(o, d + c.start[f], (size_t)len);
            memset(o + len, 0, (size_t)(w - len));
        }
    }
    release(&c);
    if (out == NULL) return NULL;
    PyObject *result = Py_BuildValue("(On)", out, w);
    Py_DECREF(out);
    return result;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* whether s[0:len] is a decimal number with an optional exponent */
static int decimal(const char *s, Py_ssize_t len) {
    const char *p = s, *e = s + len;
    if (p < e && (*p == '+' || *p == '-')) p++;
    const char *q = p;
    while (p < e && is_digit(*p)) p++;
    int before = p > q, after = 0;
    if (p < e && *p == '.') {
        p++;
        q = p;
        while (p < e && is_digit(*p)) p++;
        after = p > q;
    }
    if (!before && !after) return 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        q = p;
        while (p < e && is_digit(*p)) p++;
        if (p == q) return 0;
    }
    return p == e;
}

static PyObject *numbers(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "numbers(data, buffer, count, capacity, width, k) takes 6 arguments");
        return NULL;
    }
    Column c;
    if (column_of(args, &c) < 0) return NULL;
    Py_ssize_t rows = c.count / c.width;
    PyObject *out = PyByteArray_FromStringAndSize(NULL, rows * (Py_ssize_t)sizeof(double));
    if (out == NULL) {
        release(&c);
        return NULL;
    }
    double *values = (double *)PyByteArray_AS_STRING(out);
    const char *d = c.data.buf;
    char text[WIDEST + 1];
    for (Py_ssize_t r = 0, f = c.k; r < rows; r++, f += c.width) {
        Py_ssize_t len = c.end[f] - c.start[f];
        if (len > WIDEST || !decimal(d + c.start[f], len)) {
            release(&c);
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        memcpy(text, d + c.start[f], (size_t)len);
        text[len] = '\0';
        char *stop;
        values[r] = PyOS_string_to_double(text, &stop, NULL); /* float()'s conversion; overflow gives +-inf */
        if ((values[r] == -1.0 && PyErr_Occurred()) || stop != text + len) {
            release(&c);
            Py_DECREF(out);
            return NULL;
        }
    }
    release(&c);
    return out;
}

static PyMethodDef methods[] = {
    {"fields", (PyCFunction)(void (*)(void))fields, METH_FASTCALL,
     "fields(data, width): the fields of plain text, or None (see the module)."},
    {"chars", (PyCFunction)(void (*)(void))chars, METH_FASTCALL,
     "chars(data, buffer, count, capacity, width, k, multiple): a field's bytes, NUL-padded."},
    {"numbers", (PyCFunction)(void (*)(void))numbers, METH_FASTCALL,
     "numbers(data, buffer, count, capacity, width, k): float() of a field, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_trec_scan", "The fields of plain TREC run and qrels text.", -1, methods,
};

PyMODINIT_FUNC PyInit__trec_scan(void) { return PyModule_Create(&module); }
