#ifndef CPUSHSYSTEM_SHIM_H
#define CPUSHSYSTEM_SHIM_H
// Linux interfaces the Swift Glibc module does not cover: epoll, eventfd and thread names. Only PushSystem
// imports this module. Constants are re-exported as functions or plain values because some of
// them are macros Swift cannot import.
#include <fcntl.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline uint32_t CPushSystem_EPOLLIN(void) { return EPOLLIN; }
static inline uint32_t CPushSystem_EPOLLOUT(void) { return EPOLLOUT; }
static inline uint32_t CPushSystem_EPOLLRDHUP(void) { return EPOLLRDHUP; }
static inline uint32_t CPushSystem_EPOLLHUP(void) { return EPOLLHUP; }
static inline uint32_t CPushSystem_EPOLLERR(void) { return EPOLLERR; }
static inline int CPushSystem_EPOLL_CLOEXEC(void) { return EPOLL_CLOEXEC; }
static inline int CPushSystem_EFD_NONBLOCK_CLOEXEC(void) { return EFD_NONBLOCK | EFD_CLOEXEC; }

// fcntl is variadic.
static inline int CPushSystem_set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}
static inline int CPushSystem_set_cloexec(int fd) {
    return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

// epoll_event is a packed struct on x86-64; these accessors keep Swift away from its layout.
static inline void CPushSystem_epoll_event_set(struct epoll_event *event, uint32_t events, uint64_t data) {
    event->events = events;
    event->data.u64 = data;
}
static inline uint32_t CPushSystem_epoll_event_events(const struct epoll_event *events, int index) {
    return events[index].events;
}
static inline uint64_t CPushSystem_epoll_event_data(const struct epoll_event *events, int index) {
    return events[index].data.u64;
}
static inline size_t CPushSystem_epoll_event_size(void) { return sizeof(struct epoll_event); }

// The CPUs this process may run on (its affinity mask), through the raw system call so that
// cpu_set_t and its macros stay out of Swift; -1 if the call fails.
static inline int CPushSystem_usable_cpu_count(void) {
    unsigned long mask[64] = {0};
    long bytes = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
    if (bytes <= 0) return -1;
    int count = 0;
    for (long index = 0; index < bytes / (long)sizeof(unsigned long); index++) count += __builtin_popcountl(mask[index]);
    return count;
}
// Names the calling thread (Linux keeps 15 bytes); prctl is variadic.
static inline int CPushSystem_name_current_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}
#endif
