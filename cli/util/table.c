/* Two-pass aligned columns (cli/util/table.h). */
#include "cli/util/table.h"

#include <stdarg.h>
#include <string.h>

#include "common/assert.h"

#define TABLE__GAP "  "

void table_init(struct table *t, FILE *out)
{
    memset(t, 0, sizeof *t);
    t->out = out;
}

void table_start_printing(struct table *t)
{
    ASSERT(!t->printing);
    ASSERT(t->col == 0);
    t->printing = true;
}

void table_cell(struct table *t, const char *fmt, ...)
{
    char cell[TABLE_CELL_BYTES_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cell, sizeof cell, fmt, ap);
    va_end(ap);
    ASSERT(n >= 0);
    ASSERT(t->col < TABLE_COLS_MAX);
    size_t len = strlen(cell);
    if (!t->printing) {
        if (len > t->widths[t->col]) {
            t->widths[t->col] = len;
        }
        t->col++;
        if (t->col > t->n_cols) {
            t->n_cols = t->col;
        }
        return;
    }
    if (t->col > 0) {
        t->blanks += sizeof TABLE__GAP - 1;
    }
    if (len > 0) {
        fprintf(t->out, "%*s%s", (int)t->blanks, "", cell);
        t->blanks = 0;
    }
    /* Padding is owed, and printed only if a non-empty cell follows in
     * this row: no trailing blanks. */
    ASSERT(len <= t->widths[t->col]);
    t->blanks += t->widths[t->col] - len;
    t->col++;
}

void table_end_row(struct table *t)
{
    if (t->printing) {
        fputc('\n', t->out);
    }
    t->col = 0;
    t->blanks = 0;
}
