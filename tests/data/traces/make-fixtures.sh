#!/bin/sh
# Rebuild the compressed and archived trace fixtures from the text ones.
# The outputs are committed; run this only after changing a source file.
# Run from this folder: sh make-fixtures.sh
set -eu
TAR="tar --owner=0 --group=0 --numeric-owner --mtime=@0"

# gpupool: one table in every container
gzip -9nc gpupool/good.csv > gpupool/good.csv.gz
xz -9c gpupool/good.csv > gpupool/good.csv.xz
sed 's/$/\r/' gpupool/good.csv | head -c -2 > gpupool/good_crlf.csv
long=gpupool/tmp/a-directory-name-that-is-long/another-directory-name-that-is-long/and-a-third-one-to-pass-100
rm -rf gpupool/tmp && mkdir -p "$long"
cp gpupool/good.csv "$long/good.csv"
printf 'not a trace\n' > gpupool/tmp/notes.txt
ln -s notes.txt gpupool/tmp/link.csv
(cd gpupool && $TAR --format=gnu -czf good.tar.gz -C tmp notes.txt link.csv a-directory-name-that-is-long)
# pax: a file name over 100 bytes needs a pax 'path' record
paxname=a-file-name-so-long-that-neither-the-ustar-name-field-nor-the-prefix-can-hold-it-so-pax-records-it.csv
mkdir -p gpupool/tmp/pax && cp gpupool/good.csv "gpupool/tmp/pax/$paxname"
(cd gpupool && $TAR --format=pax --pax-option=delete=atime,delete=ctime -cJf good-pax.tar.xz -C tmp/pax "$paxname" -C .. notes.txt)
# a bigger table, cut short inside its compressed stream
awk 'BEGIN { print "id,submit_s,gpus,duration_s";
             for (i = 1; i <= 3000; i++) printf "big-%d,%d,%d,%d\n", i, i * 7, 1 + i % 8, 60 + i % 977 }' \
    > gpupool/tmp/big.csv
xz -9c gpupool/tmp/big.csv > gpupool/tmp/big.csv.xz
gzip -9nc gpupool/tmp/big.csv > gpupool/tmp/big.csv.gz
head -c $(( $(wc -c < gpupool/tmp/big.csv.xz) / 2 )) gpupool/tmp/big.csv.xz > gpupool/truncated.csv.xz
head -c $(( $(wc -c < gpupool/tmp/big.csv.gz) / 2 )) gpupool/tmp/big.csv.gz > gpupool/truncated.csv.gz
(cd gpupool/tmp && $TAR --format=gnu -cf big.tar big.csv)
head -c 4096 gpupool/tmp/big.tar | gzip -9n > gpupool/truncated.tar.gz
rm -rf gpupool/tmp

# philly: the JSON log on one line inside a tarball, the Pollux table in xz
mkdir -p philly/tmp/trace-data
python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))), end="")' \
    philly/cluster_job_log > philly/tmp/trace-data/cluster_job_log
printf 'machineId,number of GPUs,single GPU mem\nm1,8, 24GB\n' > philly/tmp/trace-data/cluster_machine_list
(cd philly && $TAR --format=gnu -czf trace-data.tar.gz -C tmp trace-data/cluster_machine_list trace-data/cluster_job_log)
rm -rf philly/tmp
xz -9c philly/philly.csv > philly/philly.csv.xz

# itp: members deliberately out of name order, as in the real tarballs
(cd itp && $TAR --format=gnu -czf raw-traces.tar.gz cluster02.csv LICENSE cluster01.csv)
(cd itp && $TAR --format=gnu -czf elasticflow-traces.tar.gz cluster05.csv 195job.csv LICENSE)
