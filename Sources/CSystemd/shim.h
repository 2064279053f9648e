#ifndef TRANSFERD_CSYSTEMD_SHIM_H
#define TRANSFERD_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#endif
