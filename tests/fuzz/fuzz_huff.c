/* libFuzzer target: rn_huff's tables and MCU decoding (data/image/huff.h), which
 * read a prepared frame's MCU data (its index is checked by a CRC, the data
 * are not). Input: one byte (blocks in the MCU, 1..10), then four Huffman
 * tables as a DHT segment holds them (16 counts, then the symbols: DC and AC
 * of the first component, DC and AC of the others), then the MCU's data. The
 * last two blocks use the second tables, as a 4:2:0 MCU's chroma does. The
 * decode into blocks and the decode that drops them must agree. */
#include <string.h>

#include "data/image/huff.h"
#include "fuzz.h"

/* One table from *p (DHT layout) into t; -1 when the input ends first or the table is inconsistent. */
static int take_table(rn_huff_table *t, const uint8_t **p, const uint8_t *end)
{
    if (end - *p < 16) return -1;
    uint8_t bits[17] = {0}, vals[256] = {0};
    size_t count = 0;
    for (int l = 1; l <= 16; l++) count += bits[l] = (*p)[l - 1];
    *p += 16;
    if (count > 256 || (size_t)(end - *p) < count) return -1;
    memcpy(vals, *p, count);
    *p += count;
    return rn_huff_build(t, bits, vals);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rn_huff_table t[4];
    if (size < 1) return 0;
    const uint8_t *p = data + 1, *end = data + size;
    for (int i = 0; i < 4; i++)
        if (take_table(&t[i], &p, end)) return 0;
    rn_huff_mcu m = {.blocks = 1 + data[0] % RN_HUFF_MAX_BLOCKS};
    for (int b = 0; b < m.blocks; b++) {
        int chroma = m.blocks > 2 && b >= m.blocks - 2;
        m.comp[b] = chroma ? 1 + (b == m.blocks - 1) : 0;
        m.dc[b] = &t[2 * chroma], m.ac[b] = &t[2 * chroma + 1];
    }
    int16_t blocks[RN_HUFF_MAX_BLOCKS][64], *blk[RN_HUFF_MAX_BLOCKS];
    memset(blocks, 0, sizeof blocks);
    for (int b = 0; b < RN_HUFF_MAX_BLOCKS; b++) blk[b] = blocks[b];
    int rc = rn_huff_decode_mcu(blk, &m, p, (size_t)(end - p));
    RN_ASSERT(rc == 0 || rc == -1);
    RN_ASSERT(rn_huff_decode_mcu(NULL, &m, p, (size_t)(end - p)) == rc);
    return 0;
}
