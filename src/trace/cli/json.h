/* json: the few helpers every JSON writer of nctrace's commands uses
 * (summary, deep sections, diff): members appended to a Buf as `"key":value,`
 * and the trailing comma taken back by json_end. Values are written as the
 * Markdown shows them (times as microseconds with three decimals). */
#ifndef NCT_JSON_H
#define NCT_JSON_H

#include "util.h"

void json_key(Buf *b, const char *k);                             /* "k": */
void json_str(Buf *b, const char *k, const char *v);              /* NULL: null */
void json_int(Buf *b, const char *k, long long v);
void json_bool(Buf *b, const char *k, bool v);
void json_num(Buf *b, const char *k, const char *fmt, double v);  /* NaN: null */
void json_us(Buf *b, const char *k, int64_t ns);
void json_us_opt(Buf *b, const char *k, int64_t ns);              /* negative: null (not known) */
/* Drop a trailing comma, then close the object or array. */
void json_end(Buf *b, char close);
/* A bare JSON string for the report's <script> data: '<' as \u003c (no
 * "</script>"), control bytes escaped, bytes that are not UTF-8 as U+FFFD,
 * so the page's data always parses. json_script_str: NULL as null. */
void json_script_strn(Buf *b, const char *s, size_t n);
void json_script_str(Buf *b, const char *s);

#endif
