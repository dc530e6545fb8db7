// json_string: json.dumps' escaping of a UTF-8 string, for the torch
// backend's C++ writer (ncrt_torch_events.cpp), in a header of its own so
// that tests/runtime/torch_json_test.cpp checks it without torch.
#ifndef NCRT_TORCH_JSON_STRING_H
#define NCRT_TORCH_JSON_STRING_H

#include <string>

namespace ncrt_torch {

// json.dumps(s) with its defaults (ensure_ascii): ", \\ and the short
// escapes, other controls and every non-ASCII code point as \uXXXX
// (surrogate pairs above U+FFFF), lowercase hex. False for a string that
// is not UTF-8, which torch's bindings could not give Python either (the
// Python path skips that event: so does this one).
inline bool json_string(std::string &out, const std::string &s) {
  static const char hex[] = "0123456789abcdef";
  auto u = [&](unsigned c) {
    char b[6] = {'\\', 'u', hex[(c >> 12) & 15], hex[(c >> 8) & 15], hex[(c >> 4) & 15], hex[c & 15]};
    out.append(b, 6);
  };
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      i++;
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || c == 0x7f) u(c); /* all but ' '..'~' */
          else out.push_back(static_cast<char>(c));
      }
      continue;
    }
    size_t n = c >= 0xf8 ? 0 : c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    if (!n || i + n >= s.size()) return false; /* a lead byte with too few after it */
    unsigned cp = n == 3 ? c & 7 : n == 2 ? c & 15 : c & 31;
    for (size_t k = 1; k <= n; k++) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    /* what Python's strict decoding refuses too: an overlong form (C0 80
     * for NUL), a surrogate (ED A0 80), past U+10FFFF (F4 90 80 80) */
    static const unsigned least[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return false;
    i += n + 1;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      u(0xd800 | (cp >> 10));
      u(0xdc00 | (cp & 0x3ff));
    } else {
      u(cp);
    }
  }
  out.push_back('"');
  return true;
}

}  // namespace ncrt_torch

#endif
