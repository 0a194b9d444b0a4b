/*
 * metrics_http: GET /metrics over evhttp (see metrics_http.h).
 *
 * The listening socket is made here rather than by evhttp_bind_socket(),
 * so that a bad address or a port in use is reported with the system's
 * own reason, and so that an IPv6 address listens on IPv6 only.  evhttp
 * then owns it.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "agent/base/log.h"
#include "agent/metrics/metrics_http.h"
#include "agent/report/run.h"

/* Seconds a connection may stay idle, or stall reading a reply. */
#define METRICS_HTTP_TIMEOUT 10

struct metrics_http {
	const struct run *run;
	struct evhttp *http;
};

/* The q value of one media range's parameters (";q=0.5;..."); 1 if none. */
static double accept_q(const char *params, size_t len)
{
	const char *p = params, *end = params + len;

	while (p < end) {
		while (p < end && (*p == ';' || *p == ' ' || *p == '\t'))
			p++;
		if (end - p > 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
			/* 0, 0.x, 1, 1.0: by hand, so the locale's decimal
			 * separator plays no part. */
			double q = p[2] == '1' ? 1.0 : 0.0, scale = 0.1;

			for (p += 3; p < end && *p == '.'; p++)
				;
			for (; p < end && *p >= '0' && *p <= '9'; p++, scale /= 10)
				q += (*p - '0') * scale;
			return q > 1.0 ? 1.0 : q;
		}
		while (p < end && *p != ';')
			p++;
	}
	return 1.0;
}

/*
 * Text 0.0.4 unless the scraper names application/openmetrics-text, as
 * Prometheus' own client libraries decide (client_golang's
 * NegotiateIncludingOpenMetrics, prometheus_client's choose_encoder):
 * Prometheus asks for OpenMetrics by name, while curl and browsers send
 * * / * and promtool, node_exporter's tools and older scrapers read 0.0.4
 * only.  OpenMetrics is refused by q=0, or when text/plain is named with a
 * higher q value; on a tie the scraper named OpenMetrics and gets it.
 */
enum metrics_format metrics_http_negotiate(const char *accept)
{
	double q_om = -1, q_text = -1;
	const char *p = accept;

	while (p && *p) {
		size_t len = strcspn(p, ","), type_len;
		const char *semi;

		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		semi = memchr(p, ';', len);
		type_len = semi ? (size_t)(semi - p) : len;
		while (type_len && (p[type_len - 1] == ' ' || p[type_len - 1] == '\t'))
			type_len--;
		if (type_len == 28 && strncasecmp(p, "application/openmetrics-text", 28) == 0) {
			double q = accept_q(p + type_len, len - type_len);

			q_om = q > q_om ? q : q_om;
		} else if (type_len == 10 && strncasecmp(p, "text/plain", 10) == 0) {
			double q = accept_q(p + type_len, len - type_len);

			q_text = q > q_text ? q : q_text;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return q_om > 0 && q_om >= q_text ? METRICS_OPENMETRICS : METRICS_TEXT;
}

static void metrics_http_text_reply(struct evhttp_request *req, int code, const char *reason,
				    const char *text)
{
	struct evbuffer *body = evbuffer_new();

	if (!body || evbuffer_add_printf(body, "%s\n", text) < 0) {
		if (body)
			evbuffer_free(body);
		evhttp_send_error(req, HTTP_INTERNAL, "Out of memory");
		return;
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; charset=utf-8");
	evhttp_send_reply(req, code, reason, body);
	evbuffer_free(body);
}

static void metrics_http_on_request(struct evhttp_request *req, void *arg)
{
	struct metrics_http *h = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	struct evkeyvalq *out_headers = evhttp_request_get_output_headers(req);
	enum metrics_format format;
	struct evbuffer *body;

	if (!path || strcmp(path, "/metrics") != 0) {
		metrics_http_text_reply(req, HTTP_NOTFOUND, "Not Found",
					"perfgate serves GET /metrics only");
		return;
	}
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(out_headers, "Allow", "GET, HEAD");
		metrics_http_text_reply(req, HTTP_BADMETHOD, "Method Not Allowed",
					"/metrics is read-only: GET or HEAD");
		return;
	}
	format = metrics_http_negotiate(evhttp_find_header(evhttp_request_get_input_headers(req),
							   "Accept"));
	body = evbuffer_new();
	/* Never a 200 with part of the exposition: a scrape so cut would
	 * pass for the whole one. */
	if (!body || metrics_expo_render(h->run, format, true, body)) {
		if (body)
			evbuffer_free(body);
		evhttp_send_error(req, HTTP_INTERNAL, "Out of memory");
		return;
	}
	evhttp_add_header(out_headers, "Content-Type", metrics_expo_content_type(format));
	evhttp_add_header(out_headers, "Cache-Control", "no-store");
	/* Queued on the connection's buffer; evhttp writes it as the peer
	 * reads (and leaves the body out for HEAD). */
	evhttp_send_reply(req, HTTP_OK, "OK", body);
	evbuffer_free(body);
}

/* "HOST:PORT" or "[V6]:PORT" into host and port (malloc'd host): 0,
 * -ENOMEM, or -1 when addr is not of that form. */
static int metrics_http_split(const char *addr, char **host, const char **port)
{
	const char *colon;

	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');

		if (!close || close[1] != ':')
			return -1;
		*host = strndup(addr + 1, (size_t)(close - addr - 1));
		*port = close + 2;
		if (!*host)
			return -ENOMEM;
	} else {
		colon = strrchr(addr, ':');
		if (!colon || memchr(addr, ':', (size_t)(colon - addr)))
			return -1;
		*host = strndup(addr, (size_t)(colon - addr));
		*port = colon + 1;
		if (!*host)
			return -ENOMEM;
	}
	if (**host == '\0' || **port == '\0' || strspn(*port, "0123456789") != strlen(*port) ||
	    strlen(*port) > 5 || atoi(*port) > 65535) {
		free(*host);
		*host = NULL;
		return -1;
	}
	return 0;
}

/* A listening socket on addr, or -1 with the message printed. */
static int metrics_http_listen(const char *addr)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	const char *port;
	char *host;
	int fd = -1, rc, err = 0;

	rc = metrics_http_split(addr, &host, &port);
	if (rc == -ENOMEM) {
		log_error("--metrics-listen '%s': out of memory", addr);
		return -1;
	}
	if (rc) {
		log_error("--metrics-listen '%s': expected ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464",
			  addr);
		return -1;
	}
	rc = getaddrinfo(host, port, &hints, &res);
	free(host);
	if (rc) {
		log_error("--metrics-listen '%s': cannot resolve the address: %s", addr,
			  gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		int one = 1;

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		log_error("--metrics-listen '%s': cannot listen: %s", addr, strerror(err));
	return fd;
}

struct metrics_http *metrics_http_start(const struct run *run, struct event_base *base,
				       const char *addr)
{
	struct metrics_http *h;
	int fd = metrics_http_listen(addr);

	if (fd < 0)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		log_error("--metrics-listen '%s': %s", addr, strerror(ENOMEM));
		close(fd);
		return NULL;
	}
	h->run = run;
	h->http = evhttp_new(base);
	if (!h->http || !evhttp_accept_socket_with_handle(h->http, fd)) {
		log_error("--metrics-listen '%s': cannot serve HTTP on it", addr);
		close(fd);
		metrics_http_free(h);
		return NULL;
	}
	/* Every method reaches the callback, which answers 405 itself
	 * (evhttp would say 501 for those it was not told about). */
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
				   EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
				   EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_timeout(h->http, METRICS_HTTP_TIMEOUT);
	evhttp_set_max_headers_size(h->http, 16384);
	evhttp_set_max_body_size(h->http, 4096);
	evhttp_set_gencb(h->http, metrics_http_on_request, h);
	return h;
}

void metrics_http_free(struct metrics_http *h)
{
	if (!h)
		return;
	if (h->http)
		evhttp_free(h->http);
	free(h);
}
