/* SQLITE_API's definition is nowhere in sight: the function is skipped with
 * a warning that names it and the macro. JV_EXPORT's is not either, but the
 * rule file lists it under c_attribute_macros. */
SQLITE_API int sqlite3_libversion_number(void) {
  return 3045000;
}

JV_EXPORT int jv_get_refcnt(int v) {
  return v;
}
