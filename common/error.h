/*
 * error: the one error type of the tree, and the conventions every layer
 * follows for failing.
 *
 * Conventions (docs/design.md, "Layers", points here):
 *
 * - Results.  A function returns 0 or -errno, or a pointer or NULL with
 *   errno set (as libperf and libbpf do).  Nothing else says "failed".
 *
 * - Positions.  A failure that is about a place in a text the user gave
 *   (an event list, a range spec, a filter, a CPU list) also fills a
 *   struct pg_error: the byte offset it is about, for a caret, and a
 *   one-line message of any length.  Messages are never cut.
 *
 * - Printing.  Only the top prints: a control command replies `err` with
 *   the message, the session prints it (with the text and a caret) at
 *   start-up.  Lower layers fill a struct pg_error or set errno, and
 *   never print.
 *
 * - Memory.  Every allocation is checked.  One that fails fails the
 *   operation it is part of: -ENOMEM, or a pg_error saying "out of
 *   memory"; a command gets `err`, start-up fails.  The agent never
 *   aborts on it.
 *
 * - Lifetimes.  Objects are made with NAME_new() and freed with
 *   NAME_free(); descriptors are taken with NAME_open() and given back
 *   with NAME_close(), as libperf names them.  A *_free() or *_close()
 *   takes NULL.
 *
 * A struct pg_error starts zeroed ("struct pg_error err = { 0 };"), is
 * filled by the function that fails, and is cleared by its owner with
 * pg_error_clear() once the message has been used.  Pure C, no I/O.
 */
#ifndef PERFGATE_COMMON_ERROR_H
#define PERFGATE_COMMON_ERROR_H

#include <stdarg.h>
#include <stddef.h>

struct pg_error {
	size_t offset;		/* the byte the failure is about, from 0 */
	char *message;		/* one line, no trailing newline; NULL: none */
};

/*
 * Fill err (NULL: do nothing) with offset and a printf-formatted message,
 * replacing any message it held.  Out of memory, the message is
 * "out of memory" instead: there is always one after this.  errno is kept.
 */
__attribute__((format(printf, 3, 4)))
void pg_error_set(struct pg_error *err, size_t offset, const char *fmt, ...);
__attribute__((format(printf, 3, 0)))
void pg_error_vset(struct pg_error *err, size_t offset, const char *fmt, va_list ap);

/*
 * Put a printf-formatted context before err's message ("bad filter for
 * 'x': " + message), the offset kept.  Out of memory, the message is
 * "out of memory".  err NULL: nothing.  errno is kept.
 */
__attribute__((format(printf, 2, 3)))
void pg_error_prefix(struct pg_error *err, const char *fmt, ...);

/*
 * Give src's offset and message to dst (its own message replaced) and
 * leave src zeroed: for a layer that passes a lower layer's error up,
 * its offset moved by shift (src's text starts at byte shift of dst's).
 */
void pg_error_move(struct pg_error *dst, struct pg_error *src, size_t shift);

/* Free err's message and zero it; err may be NULL. */
void pg_error_clear(struct pg_error *err);

#endif
