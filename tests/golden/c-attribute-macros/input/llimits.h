/* Lua's llimits.h: inline functions through macros, lower case. */
#ifndef llimits_h
#define llimits_h

#if defined(__GNUC__)
#define l_inline	__inline__
#else
#define l_inline	/* empty */
#endif

#define l_sinline	static l_inline

/* a type, not a decoration: tree-sitter reads it as one */
#if defined(__GNUC__)
#define l_noret		void __attribute__((noreturn))
#else
#define l_noret		void
#endif

#endif
