/* fuzz_rules: the rule-file reader (libyaml or cJSON into positioned nodes,
 * then the schema checker) on arbitrary bytes, as YAML and as JSON. A rule
 * file either loads or gets at least one error; a loaded file's targets all
 * have a key. No crash, leak or undefined behaviour (the sanitizers). */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "rules.h"

static void one(const char *name, const uint8_t *data, size_t size) {
  Rules r = {0};
  Diags d = {0};
  int rc = rules_parse(&r, name, (const char *)data, size, &d);
  if (rc < 0 && !d.errors) {
    fprintf(stderr, "fuzz: %s refused without an error message\n", name);
    abort();
  }
  for (size_t i = 0; rc == 0 && i < r.targets.n; i++)
    if (!r.targets.v[i].key) abort();
  rules_free(&r);
  diags_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  one("fuzz.yaml", data, size);
  one("fuzz.json", data, size);
  return 0;
}
