"""Readers of the file formats of the task modules, each raising ``InputFormatError(file, line, message)``."""
