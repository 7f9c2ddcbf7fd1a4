#include "data/image/jpeg_err.h"

#include <string.h>

static void on_error(j_common_ptr c)
{
    rn_jpeg_err *e = (rn_jpeg_err *)c->err;
    c->err->format_message(c, e->msg);
    longjmp(e->jb, 1);
}

static void on_message(j_common_ptr c, int level)
{
    rn_jpeg_err *e = (rn_jpeg_err *)c->err;
    if (level < 0 && !e->warned) {
        e->warned = 1;
        c->err->format_message(c, e->msg);
    }
}

struct jpeg_error_mgr *rn_jpeg_err_init(rn_jpeg_err *e)
{
    memset(e, 0, sizeof *e);
    struct jpeg_error_mgr *m = jpeg_std_error(&e->mgr);
    m->error_exit = on_error;
    m->emit_message = on_message;
    return m;
}
