/* Focal length from EXIF through libexif. */
#include "data/image/exif_focal.h"

#include <math.h>
#include <string.h>

#include <libexif/exif-data.h>
#include <libexif/exif-log.h>

/* The payload of the first APP1 "Exif\0\0" segment before the scan, or NULL. */
static const uint8_t *find_app1(const uint8_t *buf, size_t n, size_t *len)
{
    if (n < 4 || buf[0] != 0xFF || buf[1] != 0xD8) return NULL;
    size_t p = 2;
    while (p + 4 <= n && buf[p] == 0xFF) {
        uint8_t m = buf[p + 1];
        if (m == 0xDA || m == 0xD9) return NULL;
        size_t seg = ((size_t)buf[p + 2] << 8) | buf[p + 3];
        if (seg < 2 || p + 2 + seg > n) return NULL;
        if (m == 0xE1 && seg >= 8 && !memcmp(buf + p + 4, "Exif\0\0", 6)) {
            *len = seg - 2;
            return buf + p + 4;
        }
        p += 2 + seg;
    }
    return NULL;
}

static void on_log(ExifLog *log, ExifLogCode code, const char *domain, const char *fmt, va_list ap, void *arg)
{
    (void)log, (void)domain, (void)fmt, (void)ap;
    if (code == EXIF_LOG_CODE_CORRUPT_DATA || code == EXIF_LOG_CODE_NO_MEMORY) *(int *)arg = 1;
}

/* A RATIONAL tag's value: 0 ok, 1 absent, -1 wrong type / zero denominator. */
static int rational(double *v, ExifData *d, ExifTag tag, ExifByteOrder bo)
{
    ExifEntry *e = exif_content_get_entry(d->ifd[EXIF_IFD_EXIF], tag);
    if (!e) return 1;
    if (e->format != EXIF_FORMAT_RATIONAL || e->components < 1 || e->size < 8) return -1;
    ExifRational r = exif_get_rational(e->data, bo);
    if (!r.denominator) return -1;
    *v = (double)r.numerator / (double)r.denominator;
    return 0;
}

/* A SHORT tag's value: 0 ok, 1 absent, -1 wrong type. */
static int short_tag(unsigned *v, ExifData *d, ExifTag tag, ExifByteOrder bo)
{
    ExifEntry *e = exif_content_get_entry(d->ifd[EXIF_IFD_EXIF], tag);
    if (!e) return 1;
    if (e->format != EXIF_FORMAT_SHORT || e->components < 1 || e->size < 2) return -1;
    *v = exif_get_short(e->data, bo);
    return 0;
}

static int from_35mm(rn_exif_focal *out, ExifData *d, ExifByteOrder bo, int w, int h, rn_err *err)
{
    unsigned f35 = 0;
    int rc = short_tag(&f35, d, EXIF_TAG_FOCAL_LENGTH_IN_35MM_FILM, bo);
    if (rc < 0) return rn_err_set(err, "EXIF FocalLengthIn35mmFilm: not a SHORT");
    if (rc > 0 || f35 == 0) return 1;
    out->f[0] = out->f[1] = f35 / 36.0 * (w > h ? w : h);
    out->source = "exif-35mm";
    return 0;
}

static double unit_mm(unsigned unit)
{
    switch (unit) {
    case 2: return 25.4;
    case 3: return 10.0;
    case 4: return 1.0;
    case 5: return 1e-3;
    default: return 0.0;
    }
}

static int from_focal_plane(rn_exif_focal *out, ExifData *d, ExifByteOrder bo, rn_err *err)
{
    double f = 0, xr = 0, yr = 0;
    unsigned unit = 2;
    int rf = rational(&f, d, EXIF_TAG_FOCAL_LENGTH, bo);
    int rx = rational(&xr, d, EXIF_TAG_FOCAL_PLANE_X_RESOLUTION, bo);
    int ry = rational(&yr, d, EXIF_TAG_FOCAL_PLANE_Y_RESOLUTION, bo);
    int ru = short_tag(&unit, d, EXIF_TAG_FOCAL_PLANE_RESOLUTION_UNIT, bo);
    if (rf < 0) return rn_err_set(err, "EXIF FocalLength: not a RATIONAL with a non-zero denominator");
    if (rx < 0 || ry < 0) return rn_err_set(err, "EXIF FocalPlaneX/YResolution: not a RATIONAL with a non-zero denominator");
    if (ru < 0) return rn_err_set(err, "EXIF FocalPlaneResolutionUnit: not a SHORT");
    if (rf > 0 || rx > 0) return 1;
    if (ry > 0) yr = xr;
    if (!unit_mm(unit)) return rn_err_set(err, "EXIF FocalPlaneResolutionUnit %u: not 2 (inch), 3 (cm), 4 (mm) or 5 (um)", unit);
    out->f[0] = f * xr / unit_mm(unit);
    out->f[1] = f * yr / unit_mm(unit);
    if (!(out->f[0] > 0 && out->f[1] > 0 && isfinite(out->f[0]) && isfinite(out->f[1])))
        return rn_err_set(err, "EXIF FocalLength %g mm with focal-plane resolution %g, %g per unit %u: focal %g, %g px "
                          "is not a positive number", f, xr, yr, unit, out->f[0], out->f[1]);
    out->source = "exif-focal-plane";
    return 0;
}

int rn_exif_focal_read(rn_exif_focal *out, const uint8_t *buf, size_t n, int width, int height, rn_err *err)
{
    memset(out, 0, sizeof *out);
    size_t len = 0;
    const uint8_t *app1 = find_app1(buf, n, &len);
    if (!app1) return 1;
    ExifData *d = exif_data_new();
    ExifLog *log = exif_log_new();
    if (!d || !log) {
        if (d) exif_data_unref(d);
        if (log) exif_log_unref(log);
        return rn_err_set(err, "EXIF: out of memory");
    }
    int corrupt = 0;
    exif_log_set_func(log, on_log, &corrupt);
    exif_data_log(d, log);
    exif_data_load_data(d, app1, (unsigned)len);
    int rc;
    if (corrupt || !d->ifd[EXIF_IFD_0] || !d->ifd[EXIF_IFD_0]->count)
        rc = rn_err_set(err, "EXIF: the Exif segment (%zu bytes) is corrupt", len);
    else {
        ExifByteOrder bo = exif_data_get_byte_order(d);
        rc = from_35mm(out, d, bo, width, height, err);
        if (rc == 1) rc = from_focal_plane(out, d, bo, err);
    }
    exif_data_unref(d);
    exif_log_unref(log);
    return rc;
}

int rn_exif_orientation(const uint8_t *buf, size_t n)
{
    size_t len = 0;
    const uint8_t *app1 = find_app1(buf, n, &len);
    if (!app1) return 1;
    ExifData *d = exif_data_new();
    ExifLog *log = exif_log_new();
    int o = 1, corrupt = 0;
    if (d && log) {
        exif_log_set_func(log, on_log, &corrupt);
        exif_data_log(d, log);
        exif_data_load_data(d, app1, (unsigned)len);
        ExifEntry *e = d->ifd[EXIF_IFD_0] ? exif_content_get_entry(d->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION) : NULL;
        if (e && e->format == EXIF_FORMAT_SHORT && e->components >= 1 && e->size >= 2)
            o = exif_get_short(e->data, exif_data_get_byte_order(d));
    }
    if (d) exif_data_unref(d);
    if (log) exif_log_unref(log);
    return o >= 1 && o <= 8 ? o : 1;
}
