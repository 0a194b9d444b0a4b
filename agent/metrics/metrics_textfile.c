/*
 * metrics_textfile: atomic writes of the exposition (metrics_textfile.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <event2/buffer.h>

#include "agent/metrics/metrics_expo.h"
#include "agent/metrics/metrics_textfile.h"

/* "DIR/.NAME.XXXXXX" beside path, for mkstemp. */
static char *metrics_textfile_temp_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len = slash ? (size_t)(slash - path + 1) : 0;
	char *tmp = NULL;

	if (asprintf(&tmp, "%.*s.%s.XXXXXX", (int)dir_len, path, path + dir_len) < 0)
		return NULL;
	return tmp;
}

int metrics_textfile_write(const struct run *run, const char *path)
{
	struct evbuffer *text = evbuffer_new();
	char *tmp = metrics_textfile_temp_name(path);
	int fd = -1, err = 0;

	if (!text || !tmp) {
		err = ENOMEM;
		goto out;
	}
	if (metrics_expo_render(run, METRICS_TEXT, true, text)) {
		err = ENOMEM;
		goto out;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = errno;
		goto out;
	}
	/* mkstemp makes it 0600; the collector may run as another user. */
	if (fchmod(fd, 0644) < 0)
		err = errno;
	while (!err && evbuffer_get_length(text) > 0) {
		int n = evbuffer_write(text, fd);

		if (n < 0 && errno != EINTR)
			err = errno;
	}
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && rename(tmp, path) < 0)
		err = errno;
	if (err)
		unlink(tmp);
out:
	free(tmp);
	if (text)
		evbuffer_free(text);
	errno = err;
	return err ? -1 : 0;
}
