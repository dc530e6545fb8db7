/* rewrite_check: the properties every rewriter fuzz target checks on an
 * input, in one place:
 *   - no crash, leak or undefined behaviour (the sanitizers' part);
 *   - the edits never overlap (edits_apply succeeds);
 *   - output parses whenever the input parsed (tree-sitter, same grammar;
 *     for Python, an input CPython refuses is not held to it);
 *   - rewriting the output again changes nothing (it is recognised as
 *     already instrumented, or gets no edits).
 * A broken property aborts with a message, which libFuzzer reports as a
 * crash and the replay test as a failure. */
#ifndef NC_FUZZ_REWRITE_CHECK_H
#define NC_FUZZ_REWRITE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz.h"
#include "rewrite.h"

/* Rewrite `data` as file `rel` of language `lang`, once with the rule text
 * `rules_yaml` (targets name the module "m" or the path) and once in full
 * trace mode, checking the properties above. */
void fuzz_rewrite_check(const uint8_t *data, size_t size, Lang lang, const char *rel, const char *rules_yaml);

#endif
