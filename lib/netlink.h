/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbench generic netlink helpers: a NETLINK_GENERIC socket, family
 * lookup, request building, message and attribute walking, and
 * request/reply round trips. Every decoder works on a buffer (a message
 * already received), so it can be tested and fuzzed without a socket.
 * The taskstats family lives in taskstats.h.
 */
#ifndef KBENCH_NETLINK_H
#define KBENCH_NETLINK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>

/* ---- socket ---------------------------------------------------------- */

struct kb_nl {
	int fd;
	uint32_t portid;	/* our netlink address, from getsockname() */
	uint32_t seq;		/* next sequence number */
	uint16_t family;	/* resolved generic netlink family id, 0 = none */
};

/*
 * Open and bind a NETLINK_GENERIC socket. @rcvbuf (bytes, 0 = default) is
 * forced with SO_RCVBUFFORCE when privileged, else SO_RCVBUF (capped by
 * net.core.rmem_max). Receives time out after @timeout_ms (0 = never) so
 * a lost reply cannot hang the caller. Returns 0 or -errno.
 */
int kb_nl_open(struct kb_nl *nl, size_t rcvbuf, unsigned int timeout_ms);
void kb_nl_close(struct kb_nl *nl);

/* The receive buffer size the kernel granted (bytes), or -errno. */
long kb_nl_rcvbuf(const struct kb_nl *nl);

/* ---- messages -------------------------------------------------------- */

#define KB_NL_REQ_MAX	256

/* One request: nlmsghdr + genlmsghdr + attributes. */
struct kb_nl_req {
	union {
		struct nlmsghdr nlh;
		char buf[KB_NL_REQ_MAX];
	};
};

/* Start a generic netlink request (NLM_F_REQUEST). */
void kb_nl_genl_req_init(struct kb_nl_req *req, uint16_t family, uint8_t cmd,
			 uint8_t version, uint32_t seq);

/* Append one attribute. Returns 0 or -EMSGSIZE. */
int kb_nl_attr_append(struct kb_nl_req *req, uint16_t type, const void *data,
		      size_t len);
int kb_nl_attr_append_u32(struct kb_nl_req *req, uint16_t type, uint32_t val);
int kb_nl_attr_append_str(struct kb_nl_req *req, uint16_t type, const char *s);

/* Send one request whole. Returns 0 or -errno. */
int kb_nl_send(struct kb_nl *nl, const void *buf, size_t len);

/*
 * Receive one datagram into @buf. Returns its length, or -errno
 * (-EAGAIN after the socket's timeout, -ENOBUFS when the kernel dropped
 * messages for us, -EMSGSIZE when @size was too small).
 */
ssize_t kb_nl_recv(struct kb_nl *nl, void *buf, size_t size);

/* Take the next sequence number for a request. */
uint32_t kb_nl_next_seq(struct kb_nl *nl);

/*
 * Wait for the message answering @seq (other messages are skipped).
 * Returns 0 for an ack, the -errno of an error message, 1 when the answer
 * is a data message, or -errno of the receive (-EAGAIN: timed out).
 */
int kb_nl_wait_ack(struct kb_nl *nl, uint32_t seq);

/* Room for one received datagram of the round trips below. */
#define KB_NL_RECV_MAX	16384

/*
 * Decodes one reply message into @out; returns what the round trip
 * returns (0 or a value >= 0 on success, -errno otherwise).
 */
typedef int (*kb_nl_reply_fn)(const struct nlmsghdr *nlh, void *out);

/* The ack decoder: kb_nl_msg_error() as a kb_nl_reply_fn. */
int kb_nl_ack_decode(const struct nlmsghdr *nlh, void *out);

/* Send @req whole and decode the reply with its sequence number. */
int kb_nl_transact(struct kb_nl *nl, const struct kb_nl_req *req,
		   kb_nl_reply_fn parse, void *out);

/*
 * Receive until the message with @seq arrives; stray messages (late
 * replies to an abandoned request, exit notifications) are skipped.
 * @buf must hold one whole datagram. Returns the message (inside @buf)
 * or NULL with *@err set.
 */
const struct nlmsghdr *kb_nl_recv_seq(struct kb_nl *nl, uint32_t seq,
				      void *buf, size_t size, int *err);

/* The message of @seq in one datagram @buf[0..@len), or NULL. */
const struct nlmsghdr *kb_nl_msg_find_seq(const void *buf, size_t len,
					  uint32_t seq);

/*
 * Walk the netlink messages of one datagram: returns the message at
 * *@off and advances *@off, or NULL at the end or on a truncated or
 * malformed header.
 */
const struct nlmsghdr *kb_nl_msg_next(const void *buf, size_t len,
				      size_t *off);

/*
 * The error of an NLMSG_ERROR message (0 for an ack, -errno otherwise;
 * -EBADMSG when it is too short), or 1 when @nlh is not an error message.
 */
int kb_nl_msg_error(const struct nlmsghdr *nlh);

/* The genetlink payload (attributes) of a message; NULL (@len 0) if too short. */
const void *kb_nl_genl_attrs(const struct nlmsghdr *nlh, size_t *len);

/* ---- attributes ------------------------------------------------------ */

/*
 * Iterate over the attributes in @data[0..@len): first/next return NULL
 * when no complete attribute is left (a length field that is too small or
 * runs past the end stops the walk).
 */
const struct nlattr *kb_nl_attr_first(const void *data, size_t len,
				      size_t *rem);
const struct nlattr *kb_nl_attr_next(const struct nlattr *nla, size_t *rem);

#define kb_nl_attr_for_each(nla, data, len, rem)				\
	for ((nla) = kb_nl_attr_first((data), (len), &(rem)); (nla);	\
	     (nla) = kb_nl_attr_next((nla), &(rem)))

/* Type without the NLA_F_NESTED / NLA_F_NET_BYTEORDER flags. */
uint16_t kb_nl_attr_type(const struct nlattr *nla);
const void *kb_nl_attr_data(const struct nlattr *nla);
size_t kb_nl_attr_len(const struct nlattr *nla);

/* First attribute of @type, or NULL. */
const struct nlattr *kb_nl_attr_find(const void *data, size_t len,
				     uint16_t type);

/* A u32 attribute; -EINVAL (@val 0) when it is shorter than 4 bytes. */
int kb_nl_attr_get_u32(const struct nlattr *nla, uint32_t *val);

/* ---- generic netlink control ----------------------------------------- */

/*
 * Resolve a generic netlink family by name (CTRL_CMD_GETFAMILY). Returns
 * the id (> 0), -ENOENT when the kernel has no such family, or -errno.
 * Needs no privilege.
 */
int kb_nl_genl_family_id(struct kb_nl *nl, const char *name);

/*
 * Decode a CTRL_CMD_GETFAMILY reply: the family id (> 0), the -errno of
 * an error message, or -EBADMSG (no id, a short or zero id). @out unused.
 */
int kb_nl_genl_family_id_decode(const struct nlmsghdr *nlh, void *out);

#endif /* KBENCH_NETLINK_H */
