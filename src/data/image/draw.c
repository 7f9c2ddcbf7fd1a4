/* PNG/JPEG output of 8-bit RGB images. */
#include "data/image/draw.h"

#include <jpeglib.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/afile.h"
#include "data/image/jpeg_err.h"

typedef struct mem_buf {
    unsigned char *p;
    size_t n, cap;
} mem_buf;

static void mem_write(png_structp ps, png_bytep data, png_size_t n)
{
    mem_buf *m = png_get_io_ptr(ps);
    if (m->n + n > m->cap) {
        size_t cap = m->cap ? m->cap : 65536;
        while (cap < m->n + n) cap *= 2;
        unsigned char *q = realloc(m->p, cap);
        if (!q) png_error(ps, "out of memory");
        m->p = q, m->cap = cap;
    }
    memcpy(m->p + m->n, data, n);
    m->n += n;
}

static void mem_flush(png_structp ps) { (void)ps; }

static int encode_png(mem_buf *m, const rn_rgb *img)
{
    png_structp ps = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop pi = ps ? png_create_info_struct(ps) : NULL;
    if (!pi) {
        png_destroy_write_struct(&ps, NULL);
        return -1;
    }
    if (setjmp(png_jmpbuf(ps))) {
        png_destroy_write_struct(&ps, &pi);
        return -1;
    }
    png_set_write_fn(ps, m, mem_write, mem_flush);
    png_set_IHDR(ps, pi, (png_uint_32)img->w, (png_uint_32)img->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(ps, pi);
    for (int y = 0; y < img->h; y++) png_write_row(ps, img->px + (size_t)y * img->w * 3);
    png_write_end(ps, pi);
    png_destroy_write_struct(&ps, &pi);
    return 0;
}

static int encode_jpeg(mem_buf *m, const rn_rgb *img, int quality)
{
    struct jpeg_compress_struct ci;
    rn_jpeg_err je;
    unsigned char *out = NULL;
    unsigned long n = 0;
    ci.err = rn_jpeg_err_init(&je);
    if (setjmp(je.jb)) {
        jpeg_destroy_compress(&ci);
        free(out);
        return -1;
    }
    jpeg_create_compress(&ci);
    jpeg_mem_dest(&ci, &out, &n);
    ci.image_width = (JDIMENSION)img->w, ci.image_height = (JDIMENSION)img->h;
    ci.input_components = 3, ci.in_color_space = JCS_RGB;
    jpeg_set_defaults(&ci);
    jpeg_set_quality(&ci, quality, TRUE);
    jpeg_start_compress(&ci, TRUE);
    while (ci.next_scanline < ci.image_height) {
        JSAMPROW row = img->px + (size_t)ci.next_scanline * img->w * 3;
        jpeg_write_scanlines(&ci, &row, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    m->p = out, m->n = n, m->cap = n;
    return 0;
}

static int has_ext(const char *path, const char *ext)
{
    size_t a = strlen(path), b = strlen(ext);
    return a > b && !strcasecmp(path + a - b, ext);
}

int rn_rgb_check_path(const char *path, rn_err *err)
{
    if (!has_ext(path, ".png") && !has_ext(path, ".jpg") && !has_ext(path, ".jpeg"))
        return rn_err_set(err, "%s: output must end in .png, .jpg or .jpeg", path);
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path) return 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) return rn_err_set(err, "%s: folder %s does not exist", path, dir);
    return 0;
}

int rn_rgb_encode(unsigned char **out, size_t *n, const rn_rgb *img, int quality)
{
    RN_ASSERT(quality >= 0 && quality <= 100 && img->w >= 1 && img->h >= 1);
    mem_buf m = {0};
    if (quality ? encode_jpeg(&m, img, quality) : encode_png(&m, img)) {
        free(m.p);
        return -1;
    }
    *out = m.p, *n = m.n;
    return 0;
}

int rn_rgb_write(const char *path, const rn_rgb *img, rn_err *err)
{
    if (rn_rgb_check_path(path, err)) return -1;
    int png = has_ext(path, ".png");
    if (img->w < 1 || img->h < 1) return rn_err_set(err, "%s: empty image", path);
    mem_buf m = {0};
    if (rn_rgb_encode(&m.p, &m.n, img, png ? 0 : 92))
        return rn_err_set(err, "%s: %s encoding failed", path, png ? "PNG" : "JPEG");
    rn_afile f;
    int rc = rn_afile_open(&f, path, err) || rn_afile_write(&f, m.p, m.n, err) || rn_afile_commit(&f, err) ? -1 : 0;
    free(m.p);
    return rc;
}
