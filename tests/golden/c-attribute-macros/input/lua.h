#ifndef lua_h
#define lua_h
#include <stddef.h>
#include "luaconf.h"
typedef struct lua_State lua_State;
LUA_API int (lua_gettop) (lua_State *L);
#endif
