// SPDX-License-Identifier: GPL-2.0
/*
 * kbench generic netlink helpers. See netlink.h.
 */
#include "netlink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* ---- socket ---------------------------------------------------------- */

static int set_rcvbuf(int fd, size_t bytes)
{
	int val = bytes > (size_t)(1 << 30) ? 1 << 30 : (int)bytes;

	/* FORCE ignores net.core.rmem_max but needs CAP_NET_ADMIN. */
	if (!setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &val, sizeof(val)))
		return 0;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)))
		return -errno;
	return 0;
}

static int set_timeout(int fd, unsigned int timeout_ms)
{
	struct timeval tv = {
		.tv_sec = timeout_ms / 1000,
		.tv_usec = (timeout_ms % 1000) * 1000,
	};

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -errno;
	return 0;
}

int kb_nl_open(struct kb_nl *nl, size_t rcvbuf, unsigned int timeout_ms)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK };
	socklen_t alen = sizeof(addr);
	int err;

	memset(nl, 0, sizeof(*nl));
	nl->seq = 1;
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return -errno;
	if (bind(nl->fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    getsockname(nl->fd, (struct sockaddr *)&addr, &alen)) {
		err = -errno;
		goto fail;
	}
	nl->portid = addr.nl_pid;
	err = rcvbuf ? set_rcvbuf(nl->fd, rcvbuf) : 0;
	if (!err && timeout_ms)
		err = set_timeout(nl->fd, timeout_ms);
	if (err)
		goto fail;
	return 0;
fail:
	close(nl->fd);
	nl->fd = -1;
	return err;
}

void kb_nl_close(struct kb_nl *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	nl->fd = -1;
}

long kb_nl_rcvbuf(const struct kb_nl *nl)
{
	socklen_t len = sizeof(int);
	int val;

	if (getsockopt(nl->fd, SOL_SOCKET, SO_RCVBUF, &val, &len))
		return -errno;
	return val;
}

/* ---- messages -------------------------------------------------------- */

void kb_nl_genl_req_init(struct kb_nl_req *req, uint16_t family, uint8_t cmd,
			 uint8_t version, uint32_t seq)
{
	struct genlmsghdr *genl;

	memset(req->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	req->nlh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req->nlh.nlmsg_type = family;
	req->nlh.nlmsg_flags = NLM_F_REQUEST;
	req->nlh.nlmsg_seq = seq;
	genl = NLMSG_DATA(&req->nlh);
	genl->cmd = cmd;
	genl->version = version;
}

/*
 * gcc 12 with -fsanitize=address loses track of the union here and warns
 * of a write "into a region of size 0" although off + total is checked
 * against sizeof(buf) first: a false positive of that build only.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
int kb_nl_attr_append(struct kb_nl_req *req, uint16_t type, const void *data,
		      size_t len)
{
	size_t off = NLMSG_ALIGN(req->nlh.nlmsg_len);
	size_t total = NLA_ALIGN(NLA_HDRLEN + len);
	struct nlattr nla;

	if (NLA_HDRLEN + len > UINT16_MAX || off + total > sizeof(req->buf))
		return -EMSGSIZE;
	/*
	 * The header goes in by memcpy from a local: gcc's ASan build cannot
	 * see through the union that this offset stays inside buf.
	 */
	nla.nla_type = type;
	nla.nla_len = NLA_HDRLEN + len;
	memcpy(req->buf + off, &nla, sizeof(nla));
	memcpy(req->buf + off + NLA_HDRLEN, data, len);
	/* Zero the alignment padding: the kernel sees every byte we send. */
	memset(req->buf + off + NLA_HDRLEN + len, 0, total - NLA_HDRLEN - len);
	req->nlh.nlmsg_len = off + total;
	return 0;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

int kb_nl_attr_append_u32(struct kb_nl_req *req, uint16_t type, uint32_t val)
{
	return kb_nl_attr_append(req, type, &val, sizeof(val));
}

int kb_nl_attr_append_str(struct kb_nl_req *req, uint16_t type, const char *s)
{
	return kb_nl_attr_append(req, type, s, strlen(s) + 1);
}

int kb_nl_send(struct kb_nl *nl, const void *buf, size_t len)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t n;

	do {
		n = sendto(nl->fd, buf, len, 0, (struct sockaddr *)&kernel,
			   sizeof(kernel));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EMSGSIZE;
}

ssize_t kb_nl_recv(struct kb_nl *nl, void *buf, size_t size)
{
	ssize_t n;

	do {
		n = recv(nl->fd, buf, size, MSG_TRUNC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if ((size_t)n > size)
		return -EMSGSIZE;
	return n;
}

const struct nlmsghdr *kb_nl_msg_next(const void *buf, size_t len,
				      size_t *off)
{
	const struct nlmsghdr *nlh;
	size_t rem;

	if (*off >= len)
		return NULL;
	rem = len - *off;
	nlh = (const struct nlmsghdr *)((const char *)buf + *off);
	if (rem < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN ||
	    nlh->nlmsg_len > rem)
		return NULL;
	*off += NLMSG_ALIGN(nlh->nlmsg_len);
	return nlh;
}

int kb_nl_msg_error(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);

	if (nlh->nlmsg_type != NLMSG_ERROR)
		return 1;
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(e->error)))
		return -EBADMSG;
	return e->error;
}

const void *kb_nl_genl_attrs(const struct nlmsghdr *nlh, size_t *len)
{
	*len = 0;
	if (nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return NULL;
	*len = nlh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	return (const char *)NLMSG_DATA(nlh) + GENL_HDRLEN;
}

/* ---- attributes ------------------------------------------------------ */

static const struct nlattr *nla_check(const void *at, size_t rem)
{
	const struct nlattr *nla = at;

	if (rem < NLA_HDRLEN || nla->nla_len < NLA_HDRLEN ||
	    nla->nla_len > rem)
		return NULL;
	return nla;
}

const struct nlattr *kb_nl_attr_first(const void *data, size_t len,
				      size_t *rem)
{
	*rem = data ? len : 0;
	return data ? nla_check(data, len) : NULL;
}

const struct nlattr *kb_nl_attr_next(const struct nlattr *nla, size_t *rem)
{
	size_t step = NLA_ALIGN(nla->nla_len);

	if (step >= *rem) {
		*rem = 0;
		return NULL;
	}
	*rem -= step;
	return nla_check((const char *)nla + step, *rem);
}

uint16_t kb_nl_attr_type(const struct nlattr *nla)
{
	return nla->nla_type & NLA_TYPE_MASK;
}

const void *kb_nl_attr_data(const struct nlattr *nla)
{
	return (const char *)nla + NLA_HDRLEN;
}

size_t kb_nl_attr_len(const struct nlattr *nla)
{
	return nla->nla_len - NLA_HDRLEN;
}

const struct nlattr *kb_nl_attr_find(const void *data, size_t len,
				     uint16_t type)
{
	const struct nlattr *nla;
	size_t rem;

	kb_nl_attr_for_each(nla, data, len, rem)
		if (kb_nl_attr_type(nla) == type)
			return nla;
	return NULL;
}

int kb_nl_attr_get_u32(const struct nlattr *nla, uint32_t *val)
{
	*val = 0;
	if (kb_nl_attr_len(nla) < sizeof(*val))
		return -EINVAL;
	memcpy(val, kb_nl_attr_data(nla), sizeof(*val));
	return 0;
}

/* ---- request / reply round trips ------------------------------------- */

uint32_t kb_nl_next_seq(struct kb_nl *nl)
{
	return nl->seq++;
}

const struct nlmsghdr *kb_nl_msg_find_seq(const void *buf, size_t len,
					  uint32_t seq)
{
	const struct nlmsghdr *nlh;
	size_t off = 0;

	while ((nlh = kb_nl_msg_next(buf, len, &off)))
		if (nlh->nlmsg_seq == seq)
			return nlh;
	return NULL;
}

const struct nlmsghdr *kb_nl_recv_seq(struct kb_nl *nl, uint32_t seq,
				      void *buf, size_t size, int *err)
{
	const struct nlmsghdr *nlh;
	ssize_t n;

	for (;;) {
		n = kb_nl_recv(nl, buf, size);
		if (n < 0) {
			*err = (int)n;
			return NULL;
		}
		nlh = kb_nl_msg_find_seq(buf, n, seq);
		if (nlh)
			return nlh;
	}
}

/* Wait for the reply with @seq and hand it to @parse. */
static int recv_reply(struct kb_nl *nl, uint32_t seq, kb_nl_reply_fn parse,
		      void *out)
{
	/* A reply can be larger than a stack frame should be. */
	char *buf = malloc(KB_NL_RECV_MAX);
	const struct nlmsghdr *nlh;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	nlh = kb_nl_recv_seq(nl, seq, buf, KB_NL_RECV_MAX, &err);
	if (nlh)
		err = parse(nlh, out);
	free(buf);
	return err;
}

int kb_nl_transact(struct kb_nl *nl, const struct kb_nl_req *req,
		   kb_nl_reply_fn parse, void *out)
{
	int err = kb_nl_send(nl, req->buf, req->nlh.nlmsg_len);

	return err ? err : recv_reply(nl, req->nlh.nlmsg_seq, parse, out);
}

int kb_nl_ack_decode(const struct nlmsghdr *nlh, void *out)
{
	(void)out;
	return kb_nl_msg_error(nlh);
}

int kb_nl_wait_ack(struct kb_nl *nl, uint32_t seq)
{
	return recv_reply(nl, seq, kb_nl_ack_decode, NULL);
}

/* ---- generic netlink control ----------------------------------------- */

int kb_nl_genl_family_id_decode(const struct nlmsghdr *nlh, void *out)
{
	const struct nlattr *nla;
	const void *attrs;
	uint16_t id;
	size_t len;
	int err = kb_nl_msg_error(nlh);

	(void)out;
	if (err <= 0)
		return err ? err : -EBADMSG;
	attrs = kb_nl_genl_attrs(nlh, &len);
	nla = attrs ? kb_nl_attr_find(attrs, len, CTRL_ATTR_FAMILY_ID) : NULL;
	if (!nla || kb_nl_attr_len(nla) < sizeof(id))
		return -EBADMSG;
	memcpy(&id, kb_nl_attr_data(nla), sizeof(id));
	return id ? id : -EBADMSG;
}

int kb_nl_genl_family_id(struct kb_nl *nl, const char *name)
{
	struct kb_nl_req req;
	int err;

	kb_nl_genl_req_init(&req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1,
			    kb_nl_next_seq(nl));
	err = kb_nl_attr_append_str(&req, CTRL_ATTR_FAMILY_NAME, name);
	return err ? err : kb_nl_transact(nl, &req, kb_nl_genl_family_id_decode,
					  NULL);
}
