/*
 * kernel_table_names: prints the name of every kernel of the table, one a
 * line, so shell tests can loop over the table without copying it. No GPU.
 */
#include <stdio.h>

#include "internal.h"

int main(void) {
    for (int i = 0; i < hgemm__kernel_count(); i++) printf("%s\n", hgemm__kernel_at(i)->name);
    return 0;
}
