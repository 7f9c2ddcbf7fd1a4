/* rn_pkw: emits a pickle (protocol 2, the protocol torch.save uses) into a
 * growing buffer, one value at a time in the order Python's pickler would.
 * No memo: every value is written where it is used.
 *
 *   rn_pkw w;
 *   rn_pkw_init(&w);                              // PROTO 2
 *   rn_pkw_begin(&w, RN_PKW_DICT);                // {
 *   rn_pkw_str(&w, "epoch"); rn_pkw_int(&w, 3);   //   'epoch': 3
 *   rn_pkw_end(&w, RN_PKW_DICT);                  // }
 *   rn_pkw_stop(&w);                              // w.b[0 .. w.n) is the pickle
 *   rn_pkw_free(&w);
 */
#ifndef RN_IO_PICKLE_WRITE_H
#define RN_IO_PICKLE_WRITE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rn_pkw {
    uint8_t *b;
    size_t n, cap;
} rn_pkw;

/* Containers: begin pushes the empty container (or, for a tuple, a mark) and a
 * mark; end collects what was written since into it (dict: key, value, ...). */
typedef enum { RN_PKW_DICT, RN_PKW_LIST, RN_PKW_TUPLE } rn_pkw_kind;

void rn_pkw_init(rn_pkw *w);
void rn_pkw_free(rn_pkw *w);
void rn_pkw_begin(rn_pkw *w, rn_pkw_kind k);
void rn_pkw_end(rn_pkw *w, rn_pkw_kind k);
void rn_pkw_int(rn_pkw *w, int64_t v);
void rn_pkw_float(rn_pkw *w, double v);
void rn_pkw_bool(rn_pkw *w, int v);
void rn_pkw_none(rn_pkw *w);
/* A str (UTF-8, NUL-terminated). */
void rn_pkw_str(rn_pkw *w, const char *s);
/* A global (module.name); neither may hold a newline. */
void rn_pkw_global(rn_pkw *w, const char *module, const char *name);
/* Calls the callable below the argument tuple on the stack (REDUCE). */
void rn_pkw_reduce(rn_pkw *w);
/* The tuple on the stack becomes a persistent id (BINPERSID). */
void rn_pkw_persid(rn_pkw *w);
/* An empty collections.OrderedDict, whose items may follow as a dict's (begin/end RN_PKW_DICT's mark part). */
void rn_pkw_ordered_dict(rn_pkw *w);
/* MARK and SETITEMS around items added to the dict on the stack. */
void rn_pkw_mark(rn_pkw *w);
void rn_pkw_setitems(rn_pkw *w);
/* STOP: the pickle is complete. */
void rn_pkw_stop(rn_pkw *w);

#endif
