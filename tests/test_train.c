/* rootnet train's pure parts: the authors' lr schedule (hand-worked), config
 * keys and files, snapshot file names. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "train/config.h"
#include "train/snapshot.h"

static void test_lr(void)
{
    rn_train_cfg c;
    rn_train_cfg_default(&c); /* lr 1e-3, dec [17], factor 10 (the authors' config.py) */
    RN_CHECK(fabs(rn_train_lr(&c, 0) - 1e-3) < 1e-15, "epoch 0: 1e-3");
    RN_CHECK(fabs(rn_train_lr(&c, 16) - 1e-3) < 1e-15, "epoch 16: 1e-3");
    RN_CHECK(fabs(rn_train_lr(&c, 17) - 1e-4) < 1e-16, "epoch 17: 1e-4");
    RN_CHECK(fabs(rn_train_lr(&c, 19) - 1e-4) < 1e-16, "epoch 19: 1e-4");
    rn_err err = {{0}};
    RN_CHECK(rn_train_cfg_set(&c, "lr_dec_epoch", "5, 8", &err) == 0, "%s", err.msg);
    RN_CHECK(rn_train_cfg_set(&c, "--lr-dec-factor", "2", &err) == 0, "%s", err.msg);
    RN_CHECK(c.n_dec == 2 && c.lr_dec_epoch[1] == 8, "list parsed");
    /* 1e-3 / 2^(count of 5, 8 <= epoch): 4 -> 1e-3, 5 -> 5e-4, 7 -> 5e-4, 8 -> 2.5e-4 */
    RN_CHECK(fabs(rn_train_lr(&c, 4) - 1e-3) < 1e-15 && fabs(rn_train_lr(&c, 5) - 5e-4) < 1e-15 &&
                 fabs(rn_train_lr(&c, 7) - 5e-4) < 1e-15 && fabs(rn_train_lr(&c, 8) - 2.5e-4) < 1e-15,
             "two decays");
}

static void test_keys(void)
{
    rn_train_cfg c;
    rn_train_cfg_default(&c);
    rn_err err = {{0}};
    RN_CHECK(rn_train_cfg_set(&c, "colour", "blue", &err) == 1, "unknown key -> 1");
    RN_CHECK(rn_train_cfg_set(&c, "batch", "3x", &err) == -1 && strstr(err.msg, "batch"), "bad int: %s", err.msg);
    RN_CHECK(rn_train_cfg_set(&c, "deterministic", "maybe", &err) == -1, "bad bool");
    RN_CHECK(rn_train_cfg_set(&c, "trainset-2d", "MSCOCO,MPII", &err) == 0 && c.n_2d == 2 &&
                 !strcmp(c.trainset_2d[1], "MPII"), "2d list");
    RN_CHECK(rn_train_cfg_set(&c, "trainset_2d", "", &err) == 0 && c.n_2d == 0, "empty 2d list");
    RN_CHECK(rn_train_cfg_set(&c, "seed", "123456789012", &err) == 0 && c.seed == 123456789012LL, "i64");
    RN_CHECK(rn_train_cfg_check(&c, &err) == -1 && strstr(err.msg, "data-dir"), "data dir required");
    RN_CHECK(rn_train_cfg_set(&c, "data_dir", "d", &err) == 0 && rn_train_cfg_check(&c, &err) == 0, "%s", err.msg);
    RN_CHECK(rn_train_cfg_set(&c, "trainset-3d", "COCO", &err) == 0 && rn_train_cfg_check(&c, &err) == -1, "bad set");
}

static void test_file(void)
{
    char path[] = "/tmp/rn_train_cfg_XXXXXX";
    int fd = mkstemp(path);
    RN_CHECK(fd >= 0, "mkstemp");
    const char *text = "# comment\n\nbackbone = 18   # trailing\nend_epoch=3\nwhat = 1\nlr = \"1e-4\"\n";
    RN_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
    close(fd);
    rn_train_cfg c, d;
    rn_train_cfg_default(&c);
    rn_err err = {{0}};
    FILE *warn = tmpfile();
    RN_CHECK(rn_train_cfg_load(&c, path, warn, &err) == 0, "%s", err.msg);
    RN_CHECK(c.backbone == 18 && c.end_epoch == 3 && c.lr == 1e-4, "values read");
    char buf[256] = {0};
    rewind(warn);
    RN_CHECK(fgets(buf, sizeof buf, warn) && strstr(buf, ":5: unknown key 'what'"), "warning names line 5: %s", buf);
    fclose(warn);
    /* format -> load round trip gives the same config */
    char text2[8192];
    rn_train_cfg_format(&c, text2, sizeof text2);
    FILE *f = fopen(path, "w");
    fputs(text2, f);
    fclose(f);
    rn_train_cfg_default(&d);
    RN_CHECK(rn_train_cfg_load(&d, path, NULL, &err) == 0, "%s", err.msg);
    RN_CHECK(!memcmp(&c, &d, sizeof c), "formatted config reloads identically");
    f = fopen(path, "w");
    fputs("batch\n", f);
    fclose(f);
    RN_CHECK(rn_train_cfg_load(&d, path, NULL, &err) == -1 && strstr(err.msg, ":1: expected 'key = value'"), "%s", err.msg);
    unlink(path);
}

static void test_names(void)
{
    int e, b, end;
    char p[256];
    rn_snapshot_path(p, sizeof p, "o/model_dump", 3, 0);
    RN_CHECK(!strcmp(p, "o/model_dump/snapshot_3.safetensors"), "%s", p);
    rn_snapshot_path(p, sizeof p, "o", 3, 7);
    RN_CHECK(!strcmp(p, "o/snapshot_3_7.safetensors"), "%s", p);
    RN_CHECK(rn_snapshot_parse_name("snapshot_3.safetensors", &e, &b, &end) == 0 && e == 4 && b == 0 && end, "end");
    RN_CHECK(rn_snapshot_parse_name("snapshot_3_7.safetensors", &e, &b, &end) == 0 && e == 3 && b == 7 && !end, "mid");
    RN_CHECK(rn_snapshot_parse_name("snapshot_3.safetensors.tmpAbc", &e, &b, &end) == -1, "temporary");
    RN_CHECK(rn_snapshot_parse_name("snapshot_x.safetensors", &e, &b, &end) == -1, "junk");
}

int main(void)
{
    test_lr();
    test_keys();
    test_file();
    test_names();
    RN_CHECK_DONE();
}
