#!/usr/bin/env bats
# c_client.bats: libperfgate as a new user meets it -- programs built from
# the build tree with the uninstalled .pc, examples/regions.c, the man
# page's own example, and a `make install` into a DESTDIR with a program
# built against the installed .pc and a man page for every function.

load helpers

setup() {
	common_setup
	: "${BUILDDIR:=$(cd "$(dirname "$PERFGATE")/.." && pwd)}"
	command -v pkg-config >/dev/null || fail "pkg-config is not installed (./bootstrap installs it)"
	command -v "${CC:-cc}" >/dev/null || fail "no C compiler"
}

# cc_user OUT SRC PKGFLAGS...: compile as a user would, with the flags the
# build itself uses (under CI's sanitizer build, the program must carry the
# sanitizer runtime that the library it links expects).
cc_user() {
	local out=$1 src=$2 cflags ldflags
	shift 2
	cflags=$(sed -n 's/^CFLAGS = //p' "$BUILDDIR/Makefile")
	ldflags=$(sed -n 's/^LDFLAGS = //p' "$BUILDDIR/Makefile")
	# shellcheck disable=SC2086
	${CC:-cc} $cflags $ldflags -o "$out" "$src" "$@"
}

# A program that makes K getppid() calls inside window "w" and prints what
# the window-end reply says, through the numeric accessors.
write_getppid_prog() {
	cat >"$T/prog.c" <<'C'
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <perfgate.h>

int main(int argc, char **argv)
{
	struct perfgate *pg = perfgate_default();
	char json[PERFGATE_REPLY_MAX], event[128];
	uint64_t call, total;
	int k = argc > 1 ? atoi(argv[1]) : 0;

	if (perfgate_window_begin(pg, "w"))
		return 2;
	for (int i = 0; i < k; i++)
		syscall(SYS_getppid);
	if (perfgate_window_end(pg, "w", json, sizeof(json)))
		return 3;
	if (perfgate_is_inert(pg)) {
		puts("inert");
		return 0;
	}
	for (size_t i = 0; perfgate_reply_event(json, i, event, sizeof(event)) == 0; i++)
		if (perfgate_reply_count(json, event, &call, &total) == 0)
			printf("%s %" PRIu64 " %" PRIu64 "\n", event, call, total);
	return 0;
}
C
}

@test "a program builds from the build tree with the uninstalled .pc and counts exactly" {
	write_getppid_prog
	local flags
	flags=$(PKG_CONFIG_PATH="$BUILDDIR/clients/c" pkg-config --cflags --libs perfgate) ||
		fail "pkg-config finds no perfgate in the build tree"
	[[ $flags == *"$BUILDDIR/clients/c/.libs"* ]] || fail "not the uninstalled .pc: $flags"
	# shellcheck disable=SC2086
	cc_user "$T/prog" "$T/prog.c" $flags || fail "build failed with: $flags"
	run "$T/prog" 5
	[ "$status" = 0 ] && [ "$output" = inert ] || fail "alone: status $status, '$output'"
	pg -D -1 -e "$GETPPID" -- "$T/prog" 37
	expect_status 0
	expect_out "$GETPPID 37 37"
}

@test "examples/regions.c builds from the build tree and marks its two windows" {
	local flags
	flags=$(PKG_CONFIG_PATH="$BUILDDIR/clients/c" pkg-config --cflags --libs perfgate)
	# shellcheck disable=SC2086
	cc_user "$T/regions" "$SRCDIR/examples/regions.c" $flags || fail "build failed"
	run "$T/regions" 1000
	[ "$status" = 0 ] || fail "alone: status $status"
	[[ $output == *"(no agent)"* ]] || fail "alone: '$output'"
	pg -D -1 -e task-clock --json-file "$T/run.json" -- "$T/regions" 20000
	expect_status 0
	grep -q '^regions: 20000 values' "$T/out" || { show_run; fail "no result line"; }
	grep -q '^regions: parse: {"window":"parse","calls":1,' "$T/err" || { show_run; fail "no parse reply"; }
	python3 - "$T/run.json" <<'PY' || { show_run; fail "windows in the document"; }
import json, sys
doc = json.load(open(sys.argv[1]))
calls = {w["name"]: w["calls"] for w in doc["windows"]}
assert calls == {"parse": 1, "compute": 1}, calls
PY
}

@test "libperfgate(3)'s EXAMPLE builds and runs as printed" {
	# The example, with groff's escapes undone.
	sed -n '/^\.SH EXAMPLE/,/^\.EE/p' "$SRCDIR/docs/libperfgate.3" | sed '1,2d;$d' |
		sed -e 's/\\-/-/g' -e 's/\\e/\\/g' >"$T/example.c"
	grep -q 'int main' "$T/example.c" || fail "no program in the EXAMPLE section"
	local flags
	flags=$(PKG_CONFIG_PATH="$BUILDDIR/clients/c" pkg-config --cflags --libs perfgate)
	# shellcheck disable=SC2086
	cc_user "$T/example" "$T/example.c" -Wall -Werror $flags || fail "the example does not build"
	pg -D -1 -e task-clock -- "$T/example"
	expect_status 0
	[[ $(cat "$T/out") =~ ^sort:\ [1-9][0-9]*\ ns\ of\ task-clock$ ]] || { show_run; fail "output"; }
}

@test "make install into a DESTDIR: a program builds against the installed .pc; every function has a man page" {
	local dest=$T/dest prefix flags f
	make -s -C "$BUILDDIR" install DESTDIR="$dest" >"$T/install.log" 2>&1 ||
		{ cat "$T/install.log"; fail "make install failed"; }
	prefix=$(sed -n 's/^prefix=//p' "$BUILDDIR/clients/c/perfgate.pc")
	[ ! -e "$dest$prefix/lib/pkgconfig/perfgate-uninstalled.pc" ] || fail "the uninstalled .pc was installed"
	write_getppid_prog
	flags=$(PKG_CONFIG_PATH="$dest$prefix/lib/pkgconfig" PKG_CONFIG_DISABLE_UNINSTALLED=1 \
		pkg-config --define-variable=prefix="$dest$prefix" --cflags --libs perfgate) ||
		fail "no perfgate.pc installed"
	[[ $flags == *"$dest"* ]] || fail "flags do not point into DESTDIR: $flags"
	# shellcheck disable=SC2086
	cc_user "$T/prog" "$T/prog.c" $flags || fail "build against the installed .pc failed"
	LD_LIBRARY_PATH="$dest$prefix/lib" pg -D -1 -e "$GETPPID" -- "$T/prog" 12
	expect_status 0
	expect_out "$GETPPID 12 12"
	# Every exported function has its page, a link to libperfgate(3).
	for f in $(sed -n 's/^\t\t\(perfgate_[a-z_]*\);$/\1/p' "$SRCDIR/clients/c/libperfgate.map"); do
		[ "$(cat "$dest$prefix/share/man/man3/$f.3" 2>/dev/null)" = ".so man3/libperfgate.3" ] ||
			fail "no man page for $f"
		grep -q "$f" "$dest$prefix/share/man/man3/libperfgate.3" || fail "libperfgate(3) does not describe $f"
	done
	[ -f "$dest$prefix/share/man/man3/libperfgate.3" ] || fail "libperfgate.3 not installed"
}
