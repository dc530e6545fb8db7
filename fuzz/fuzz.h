/* fuzz: the libFuzzer entry point every target defines; replay.c calls it
 * without libFuzzer. It returns 0 and aborts on a broken property. */
#ifndef NC_FUZZ_H
#define NC_FUZZ_H
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#endif
