/*
 * channel_lock: the lock page of the workload's control channel
 * (proto/ctl_lock.h says what it is and why).
 */
#ifndef PERFGATE_CHANNEL_LOCK_H
#define PERFGATE_CHANNEL_LOCK_H

/*
 * A sealed memfd holding an initialised page for the channel whose
 * workload ends are ctl_fd and ack_fd; close-on-exec.  Returns -1 when it
 * cannot be made (no memfd): the clients then keep the record lock, so
 * this is not an error.
 */
int channel_lock_create(int ctl_fd, int ack_fd);

#endif
