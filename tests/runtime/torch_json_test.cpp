// torch_json_test: the torch backend's C++ writer escapes a name as the
// Python path's json.dumps does, and refuses (the event dropped, as the
// Python path drops it: torch's bindings cannot decode it) every byte
// string Python's strict UTF-8 decoding refuses: overlong forms, surrogates,
// code points past U+10FFFF, cut sequences (issue 42 item 12). The
// expected texts are json.dumps(bytes.decode("utf-8")) of each input.
#include "json_string.h"

#include <cstdio>
#include <string>

int main() {
  struct Case {
    std::string in;
    const char *want; /* nullptr: refused */
  } cases[] = {
    {std::string("\x70\x6c\x61\x69\x6e", 5), R"_("plain")_"},
    {std::string("\x63\x61\x66\xc3\xa9", 5), R"_("caf\u00e9")_"},
    {std::string("\xe2\x82\xac", 3), R"_("\u20ac")_"},
    {std::string("\xf0\x9f\x98\x80", 4), R"_("\ud83d\ude00")_"},
    {std::string("\xf4\x8f\xbf\xbf", 4), R"_("\udbff\udfff")_"},
    {std::string("\xef\xbf\xbf", 3), R"_("\uffff")_"},
    {std::string("\x71\x22\x62\x5c\x0a\x01\x7f", 7), R"_("q\"b\\\n\u0001\u007f")_"},
    {std::string("\xc0\x80", 2), nullptr},
    {std::string("\xc1\xbf", 2), nullptr},
    {std::string("\xe0\x80\x80", 3), nullptr},
    {std::string("\xe0\x9f\xbf", 3), nullptr},
    {std::string("\xf0\x80\x80\x80", 4), nullptr},
    {std::string("\xf0\x8f\xbf\xbf", 4), nullptr},
    {std::string("\xed\xa0\x80", 3), nullptr},
    {std::string("\xed\xbf\xbf", 3), nullptr},
    {std::string("\xed\xa0\xbd\xed\xb8\x80", 6), nullptr},
    {std::string("\xf4\x90\x80\x80", 4), nullptr},
    {std::string("\xf7\xbf\xbf\xbf", 4), nullptr},
    {std::string("\xf8\x88\x80\x80\x80", 5), nullptr},
    {std::string("\x80", 1), nullptr},
    {std::string("\xc3", 1), nullptr},
    {std::string("\xe2\x82", 2), nullptr},
    {std::string("\x61\xc3\x28", 3), nullptr},
    {std::string("\xff", 1), nullptr},
  };
  int bad = 0;
  for (const Case &c : cases) {
    std::string out;
    bool ok = ncrt_torch::json_string(out, c.in);
    if (ok != (c.want != nullptr) || (ok && out != c.want)) {
      std::string hex;
      for (unsigned char b : c.in) {
        char t[4];
        std::snprintf(t, sizeof t, "%02x ", b);
        hex += t;
      }
      std::printf("FAIL %s: %s %s, expected %s\n", hex.c_str(), ok ? "wrote" : "refused", ok ? out.c_str() : "",
                  c.want ? c.want : "refused");
      bad++;
    }
  }
  std::printf("%s\n", bad ? "failed" : "ok");
  return bad ? 1 : 0;
}
