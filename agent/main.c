/*
 * perfgate: a perf measurement agent driven over control channels.
 *
 * The flow a reader follows: options -> events resolved and output opened
 * (session_init) -> counters opened, views attached, control channels and
 * the workload started (session_start) -> the event loop (session_run) ->
 * the final report and the workload's exit status (session_finish).
 */
#include <locale.h>
#include <stdlib.h>

#include "agent/options.h"
#include "agent/session.h"

int main(int argc, char **argv)
{
	struct options opts;
	struct session session;
	int rc, code;

	/* As perf: numbers in the report follow the user's locale. */
	setlocale(LC_ALL, "");
	rc = options_parse(&opts, argc, argv);
	if (rc) {
		options_free(&opts);
		return rc > 0 ? EXIT_SUCCESS : 129;
	}
	if (session_init(&session, &opts) || session_start(&session)) {
		session_abort(&session);
		options_free(&opts);
		return 255;
	}
	session_run(&session);
	code = session_finish(&session);
	options_free(&opts);
	return code;
}
