/*
 * fuzz_main.c: drives fuzz_validate.c without libFuzzer: FUZZ_INPUTS inputs
 * from a fixed-seed generator (so a run is reproducible), then any files
 * named on the command line. Prints "N passed, N failed"; a disagreement
 * aborts with the request printed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FUZZ_INPUTS = 200000, INPUT_BYTES = 128, FILE_BYTES_MAX = 4096 };

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv) {
    uint64_t seed = 11;
    uint8_t buf[INPUT_BYTES];
    long runs = 0;
    for (long i = 0; i < FUZZ_INPUTS; i++) {
        for (int b = 0; b < INPUT_BYTES; b += 8) {
            uint64_t v = splitmix(&seed);
            for (int j = 0; j < 8; j++) buf[b + j] = (uint8_t)(v >> (8 * j));
        }
        /* Short inputs too: the decoder reads zeros past the end. */
        LLVMFuzzerTestOneInput(buf, (size_t)(i % (INPUT_BYTES + 1)));
        runs++;
    }
    for (int a = 1; a < argc; a++) {
        static uint8_t file[FILE_BYTES_MAX];
        FILE *f = fopen(argv[a], "rb");
        if (!f) {
            fprintf(stderr, "fuzz_main: cannot open %s\n", argv[a]);
            return 1;
        }
        size_t got = fread(file, 1, sizeof file, f);
        fclose(f);
        LLVMFuzzerTestOneInput(file, got);
        runs++;
    }
    printf("fuzz_main: %ld inputs, library and model agree\n", runs);
    printf("%ld passed, 0 failed\n", runs);
    return 0;
}
