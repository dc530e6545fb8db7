#!/usr/bin/env bash
# What a part may never call, read from the symbols its objects leave
# undefined (the link-time layer checks, src/rewrite/layers, cover calls
# between the rewriter's parts):
#  - the compiler core (ncrw_core) and the rule model (ncrw_rules): no
#    printing (they report through diagnostics and outcomes), no threads
#    (the driver's), no exit or abort (ncbase's fatal handler decides);
#    the core no cJSON either;
#  - the trace core (nctrace_core: reader, inflate, util): no printing
#    (messages and the progress bar go through the program's hooks);
#  - libncrt.so: nothing of ncbase (whose allocation exits on failure):
#    the runtime lives inside other programs and never ends them.
#   test_layers.sh BUILD_DIR
set -u
B=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
undef() { nm -u "$1" | awk '{print $2}' | sed 's/@.*//' | sort -u; }

printing='^(printf|fprintf|vprintf|vfprintf|dprintf|vdprintf|puts|fputs|putchar|fputc|putc|fwrite|perror|stdout|stderr)$'
threads='^pthread_'
ending='^(exit|_exit|_Exit|abort|quick_exit)$'
for part in core rules; do
  lib="$B/src/rewrite/libncrw_$part.a"
  [ -f "$lib" ] || { fail "$lib missing"; continue; }
  u=$(undef "$lib")
  bad=$(echo "$u" | grep -E "$printing|$threads|$ending")
  [ -n "$bad" ] && fail "ncrw_$part calls $(echo $bad)"
done
u=$(undef "$B/src/rewrite/libncrw_core.a")
echo "$u" | grep -q '^cJSON_' && fail "ncrw_core calls cJSON: $(echo "$u" | grep '^cJSON_' | tr '\n' ' ')"

lib="$B/src/trace/libnctrace_core.a"
if [ -f "$lib" ]; then
  bad=$(undef "$lib" | grep -E "$printing")
  [ -n "$bad" ] && fail "nctrace_core prints: $(echo $bad)"
else
  fail "$lib missing"
fi

# the check itself: the driver does print (else the grep above proves nothing)
undef "$B/src/rewrite/libncrw_driver.a" | grep -Eq "$printing" || fail "the driver prints nothing? the symbol check is broken"

lib="$B/ncrt/libncrt.so"
if [ -f "$lib" ]; then
  base=$(nm -A "$B/src/common/libncbase.a" 2>/dev/null | awk '$2 ~ /^[TD]$/ {print $3}' | sort -u)
  [ -n "$base" ] || fail "no symbols read from libncbase.a"
  got=$(nm "$lib" 2>/dev/null | awk '{print $NF}' | sort -u)
  echo "$got" | grep -q '^rt_intern$' || fail "no symbols read from libncrt.so (stripped?)"
  both=$(comm -12 <(echo "$base") <(echo "$got"))
  [ -n "$both" ] && fail "libncrt.so has ncbase's $(echo $both)"
else
  echo "(no libncrt.so in this build: its check is skipped)"
fi
[ $fails = 0 ] && echo "ok: the core and the rules neither print, start threads nor end the process; the trace core never prints; libncrt has nothing of ncbase"
exit $((fails > 0))
