/* Functions declared through macros defined in local headers: found and
 * instrumented (the headers are read; tree-sitter parses the text with
 * the decorations blanked). */
#define LUA_CORE
#include "lua.h"
#include "llimits.h"

#include <stdlib.h>

struct lua_State { int top; };

LUA_API int lua_gettop (lua_State *L) {
  return L->top;
}

LUALIB_API int luaL_len (lua_State *L) {
  return lua_gettop(L) + 1;
}

LUAI_FUNC int luaD_grow (lua_State *L, int n) {
  L->top += n;
  return L->top;
}

l_sinline int clip (int v) {
  return v < 0 ? 0 : v;
}

/* l_inline without static: a C inline function with external linkage,
 * which may not hold the range's static variables; skipped, as a plain
 * `inline int f()` would be */
l_inline int peek (lua_State *L) {
  return L->top;
}

l_noret luaD_throw (lua_State *L, int code) {
  (void)L;
  exit(code);
}
