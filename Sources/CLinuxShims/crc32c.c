#include <stdint.h>
#include <string.h>
#include "CLinuxShims.h"

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as the journal's records carry it.
// With SSE4.2 (x86-64) or the CRC extension (AArch64) the processor computes it, 8 bytes at a
// time, several GB/s; elsewhere a table, a byte at a time.

static uint32_t table[256];
static int table_ready;

static void build_table(void) {
    for (uint32_t index = 0; index < 256; index++) {
        uint32_t crc = index;
        for (int bit = 0; bit < 8; bit++) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
        table[index] = crc;
    }
    __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t by_table(uint32_t crc, const uint8_t *bytes, size_t count) {
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) build_table();
    for (size_t index = 0; index < count; index++) crc = table[(crc ^ bytes[index]) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t by_instruction(uint32_t crc, const uint8_t *bytes, size_t count) {
    uint64_t value = crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        value = __builtin_ia32_crc32di(value, word);
        bytes += 8;
        count -= 8;
    }
    uint32_t small = (uint32_t)value;
    while (count--) small = __builtin_ia32_crc32qi(small, *bytes++);
    return small;
}

static int has_instruction(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
static uint32_t by_instruction(uint32_t crc, const uint8_t *bytes, size_t count) {
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        crc = __crc32cd(crc, word);
        bytes += 8;
        count -= 8;
    }
    while (count--) crc = __crc32cb(crc, *bytes++);
    return crc;
}

static int has_instruction(void) { return 1; }
#else
static uint32_t by_instruction(uint32_t crc, const uint8_t *bytes, size_t count) { return by_table(crc, bytes, count); }
static int has_instruction(void) { return 0; }
#endif

uint32_t clinuxshims_crc32c(uint32_t crc, const void *bytes, size_t count) {
    static int mode;  // 0 unknown, 1 instruction, 2 table
    int current = __atomic_load_n(&mode, __ATOMIC_RELAXED);
    if (current == 0) {
        current = has_instruction() ? 1 : 2;
        __atomic_store_n(&mode, current, __ATOMIC_RELAXED);
    }
    uint32_t value = ~crc;
    value = current == 1 ? by_instruction(value, bytes, count) : by_table(value, bytes, count);
    return ~value;
}
