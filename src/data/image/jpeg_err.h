/* rn_jpeg_err: the one libjpeg error manager of rootnet's decoders and
 * encoders. An error longjmps to jb (the caller's setjmp) with libjpeg's
 * message in msg; the first warning (corrupt data, libjpeg goes on) sets
 * warned and keeps its message, for the caller to refuse the image.
 *
 *   rn_jpeg_err je;
 *   ci.err = rn_jpeg_err_init(&je);
 *   if (setjmp(je.jb)) { jpeg_destroy_decompress(&ci); return rn_err_set(err, "corrupt JPEG: %s", je.msg); }
 *   jpeg_create_decompress(&ci);
 */
#ifndef RN_DATA_JPEG_ERR_H
#define RN_DATA_JPEG_ERR_H

#include <setjmp.h>
#include <stdio.h>

#include <jpeglib.h>

typedef struct rn_jpeg_err {
    struct jpeg_error_mgr mgr; /* first: libjpeg's err pointer is this struct */
    jmp_buf jb;
    int warned;
    char msg[JMSG_LENGTH_MAX];
} rn_jpeg_err;

/* Clears e and returns its manager, for cinfo.err. */
struct jpeg_error_mgr *rn_jpeg_err_init(rn_jpeg_err *e);

#endif
