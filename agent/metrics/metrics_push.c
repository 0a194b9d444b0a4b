/*
 * metrics_push: PUT to a Pushgateway (metrics_push.h).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "agent/base/log.h"
#include "agent/metrics/metrics_expo.h"
#include "agent/metrics/metrics_push.h"
#include "agent/report/run.h"

/* How one push went, filled in by the request's callbacks. */
struct push_result {
	struct event_base *base;
	int code;			/* HTTP status, 0 when none came */
	char reason[128];		/* the first line of the error body, or why none */
};

/* Does the URL have a usable scheme and host?  Parsed into *uri. */
static int push_parse(const char *url, struct evhttp_uri **uri)
{
	const char *scheme;

	*uri = evhttp_uri_parse_with_flags(url, 0);
	if (!*uri) {
		log_error("--metrics-push '%s': not a URL (e.g. http://127.0.0.1:9091)", url);
		return -1;
	}
	scheme = evhttp_uri_get_scheme(*uri);
	if (!scheme || strcmp(scheme, "http") != 0 || !evhttp_uri_get_host(*uri) ||
	    !*evhttp_uri_get_host(*uri)) {
		log_error("--metrics-push '%s': expected http://HOST[:PORT][/PATH] (https is not supported)",
			  url);
		evhttp_uri_free(*uri);
		*uri = NULL;
		return -1;
	}
	return 0;
}

int metrics_push_check(const struct options *opts)
{
	struct evhttp_uri *uri;

	if (!opts->metrics_push)
		return 0;
	if (push_parse(opts->metrics_push, &uri))
		return -1;
	evhttp_uri_free(uri);
	return 0;
}

/* base64url, '=' padded, as the Pushgateway's "NAME@base64" wants: 0, or
 * -1 out of memory. */
static int push_base64(struct evbuffer *out, const char *s)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	int rc = 0;

	if (n == 0)
		return evbuffer_add(out, "=", 1);	/* the Pushgateway's empty value */
	for (size_t i = 0; i < n && !rc; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		char quad[4] = {
			digits[v >> 18 & 63], digits[v >> 12 & 63],
			i + 1 < n ? digits[v >> 6 & 63] : '=', i + 2 < n ? digits[v & 63] : '=',
		};

		rc = evbuffer_add(out, quad, 4);
	}
	return rc;
}

/* "/NAME/VALUE" of the grouping key: a value that is empty or holds a
 * slash cannot be a path segment, so it goes as "/NAME@base64/B64".
 * 0, or -1 out of memory. */
static int push_key(struct evbuffer *path, const char *name, const char *value)
{
	char *enc;
	int rc;

	if (*value == '\0' || strchr(value, '/')) {
		if (evbuffer_add_printf(path, "/%s@base64/", name) < 0)
			return -1;
		return push_base64(path, value);
	}
	enc = evhttp_uriencode(value, -1, 0);
	if (!enc)
		return -1;
	rc = evbuffer_add_printf(path, "/%s/%s", name, enc) < 0 ? -1 : 0;
	free(enc);
	return rc;
}

/* URL's path + /metrics/job/JOB/instance/HOST/..., as a C string; NULL
 * out of memory. */
static char *push_path(const struct options *opts, const struct evhttp_uri *uri)
{
	struct evbuffer *path = evbuffer_new();
	const char *base = evhttp_uri_get_path(uri);
	const char *instance = NULL;
	char host[256] = "";
	size_t len = base ? strlen(base) : 0;
	char *text = NULL;
	int rc;

	if (!path)
		return NULL;
	while (len && base[len - 1] == '/')
		len--;
	rc = evbuffer_add(path, base, len);
	rc |= evbuffer_add_printf(path, "/metrics") < 0;
	rc |= push_key(path, "job", opts->metrics_job ? opts->metrics_job : "perfgate");
	for (size_t i = 0; i < opts->nr_metrics_labels; i++)
		if (strcmp(opts->metrics_labels[i].name, "instance") == 0)
			instance = opts->metrics_labels[i].value;
	if (!instance) {
		gethostname(host, sizeof(host) - 1);
		instance = host;
	}
	rc |= push_key(path, "instance", instance);
	for (size_t i = 0; i < opts->nr_metrics_labels; i++)
		if (strcmp(opts->metrics_labels[i].name, "instance") != 0)
			rc |= push_key(path, opts->metrics_labels[i].name,
				       opts->metrics_labels[i].value);
	len = evbuffer_get_length(path);
	if (!rc)
		text = malloc(len + 1);
	if (text) {
		evbuffer_remove(path, text, len);
		text[len] = '\0';
	}
	evbuffer_free(path);
	return text;
}

static void push_on_error(enum evhttp_request_error error, void *arg)
{
	struct push_result *r = arg;

	snprintf(r->reason, sizeof(r->reason), "%s",
		 error == EVREQ_HTTP_TIMEOUT ? "no answer within the timeout" :
		 error == EVREQ_HTTP_EOF ? "the connection closed without an answer" :
		 error == EVREQ_HTTP_INVALID_HEADER ? "the answer was not HTTP" :
		 "the request failed");
}

static void push_on_done(struct evhttp_request *req, void *arg)
{
	struct push_result *r = arg;

	if (req && evhttp_request_get_response_code(req)) {
		struct evbuffer *body = evhttp_request_get_input_buffer(req);
		size_t n = evbuffer_get_length(body);

		r->code = evhttp_request_get_response_code(req);
		if (n >= sizeof(r->reason))
			n = sizeof(r->reason) - 1;
		evbuffer_copyout(body, r->reason, n);
		r->reason[n] = '\0';
		r->reason[strcspn(r->reason, "\r\n")] = '\0';
	} else if (!r->reason[0]) {
		/* libevent calls back with no response and no error when
		 * the connection could not be made (refused, unreachable). */
		snprintf(r->reason, sizeof(r->reason), "cannot connect");
	}
	event_base_loopbreak(r->base);
}

/* Send the exposition to host:port and wait for the answer into *r.  -1
 * with a message when the request cannot even be made. */
static int push_send(const struct run *run, struct push_result *r, const char *host, int port,
		     const char *hostport, const char *path)
{
	const char *url = run->opts->metrics_push;
	struct evhttp_connection *conn = NULL;
	struct evhttp_request *req;
	int rc = -1;

	r->base = event_base_new();
	if (r->base)
		conn = evhttp_connection_base_new(r->base, NULL, host, (unsigned short)port);
	if (!conn) {
		log_error("--metrics-push '%s': cannot create the connection", url);
		goto out;
	}
	evhttp_connection_set_timeout(conn, METRICS_PUSH_TIMEOUT);
	req = evhttp_request_new(push_on_done, r);
	if (!req) {
		log_error("--metrics-push '%s': cannot send the request", url);
		goto out;
	}
	evhttp_request_set_error_cb(req, push_on_error);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Host", hostport);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  metrics_expo_content_type(METRICS_TEXT));
	/* The grouping key already labels every pushed metric. */
	if (metrics_expo_render(run, METRICS_TEXT, false, evhttp_request_get_output_buffer(req))) {
		evhttp_request_free(req);	/* not made: still ours */
		log_error("--metrics-push '%s' failed: out of memory", url);
		goto out;
	}
	if (evhttp_make_request(conn, req, EVHTTP_REQ_PUT, path)) {
		log_error("--metrics-push '%s': cannot send the request", url);
		goto out;
	}
	event_base_dispatch(r->base);
	rc = 0;
out:
	if (conn)
		evhttp_connection_free(conn);
	if (r->base)
		event_base_free(r->base);
	r->base = NULL;
	return rc;
}

int metrics_push(const struct run *run)
{
	const struct options *opts = run->opts;
	struct push_result r = { .code = 0 };
	struct evhttp_uri *uri;
	const char *host;
	char *path, *bare = NULL, hostport[300];
	int port, rc = -1;

	if (push_parse(opts->metrics_push, &uri))
		return -1;
	/* An IPv6 host comes in brackets: kept for the Host header and the
	 * messages, left out to connect. */
	host = evhttp_uri_get_host(uri);
	port = evhttp_uri_get_port(uri) > 0 ? evhttp_uri_get_port(uri) : 80;
	snprintf(hostport, sizeof(hostport), "%s:%d", host, port);
	if (host[0] == '[')
		host = bare = strndup(host + 1, strlen(host) - 2);
	path = push_path(opts, uri);
	if (!host || !path) {
		log_error("--metrics-push '%s' failed: out of memory", opts->metrics_push);
		goto out;
	}
	/* Resolved here too, only to say so clearly when it cannot be. */
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	int gai = getaddrinfo(host, NULL, &hints, &res);

	if (gai) {
		log_error("--metrics-push '%s' failed: cannot resolve '%s': %s", opts->metrics_push,
			  host, gai_strerror(gai));
		goto out;
	}
	freeaddrinfo(res);
	if (push_send(run, &r, host, port, hostport, path))
		goto out;
	if (r.code >= 200 && r.code < 300)
		rc = 0;
	else if (r.code)
		log_error("--metrics-push to http://%s%s failed: HTTP %d%s%s", hostport, path, r.code,
			  r.reason[0] ? ": " : "", r.reason);
	else
		log_error("--metrics-push to http://%s%s failed: %s", hostport, path, r.reason);
out:
	evhttp_uri_free(uri);
	free(bare);
	free(path);
	return rc;
}
