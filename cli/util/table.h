/* Aligned text columns without buffering rows. The caller emits its rows
 * twice through the same function: the first pass only measures column
 * widths, the second prints, each cell padded to its column's width and
 * separated by two spaces (no trailing blanks, even when the last cells
 * of a row are empty). Nothing is allocated, so
 * any number of rows fits. Cells longer than TABLE_CELL_BYTES_MAX - 1
 * bytes are cut. out is borrowed. */
#ifndef CAIRN_CLI_TABLE_H
#define CAIRN_CLI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Our widest table (status partitions) has 9 columns. */
#define TABLE_COLS_MAX 10

/* A topic name (249 bytes) or host (255) plus room. */
#define TABLE_CELL_BYTES_MAX 512

struct table {
    FILE *out;
    bool printing; /* false: measuring pass */
    size_t n_cols; /* columns of the widest row seen */
    size_t col;    /* next cell's column in the current row */
    size_t blanks; /* padding and gap owed before the next non-empty cell */
    size_t widths[TABLE_COLS_MAX];
};

void table_init(struct table *t, FILE *out);

/* Ends the measuring pass; rows emitted from now on are printed. */
void table_start_printing(struct table *t);

/* One cell of the current row (printf format). */
void table_cell(struct table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Ends the current row. */
void table_end_row(struct table *t);

#endif
