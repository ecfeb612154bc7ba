import assert from 'node:assert/strict'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { loadConfig } from './config.js'

describe('loadConfig: export settings', () => {
  it('exports go to <data>/exports with no bucket and no configured key by default', () => {
    const config = loadConfig({ data: '/srv/provenant' }, {})
    assert.equal(config.exportDir, join(resolve('/srv/provenant'), 'exports'))
    assert.equal(config.exportBucket, undefined)
    assert.equal(config.downloadUrlKey, undefined)
    assert.equal(loadConfig({}, { PROVENANT_EXPORT_DIR: '/mnt/shared/exports' }).exportDir, '/mnt/shared/exports')
  })

  it('reads an S3-compatible bucket: path style with an endpoint, virtual-hosted on AWS, AWS_* credentials as fallback', () => {
    const minio = loadConfig(
      {},
      {
        PROVENANT_EXPORT_S3_BUCKET: 'exports',
        PROVENANT_EXPORT_S3_ENDPOINT: 'http://minio:9000/',
        PROVENANT_EXPORT_S3_PREFIX: 'p/',
        PROVENANT_EXPORT_S3_ACCESS_KEY_ID: 'AK',
        PROVENANT_EXPORT_S3_SECRET_ACCESS_KEY: 'SK',
      },
    ).exportBucket
    assert.deepEqual(minio, {
      bucket: 'exports',
      region: 'us-east-1',
      endpoint: 'http://minio:9000',
      pathStyle: true,
      prefix: 'p/',
      accessKeyId: 'AK',
      secretAccessKey: 'SK',
      sessionToken: undefined,
    })
    const aws = loadConfig(
      {},
      {
        PROVENANT_EXPORT_S3_BUCKET: 'b',
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'A',
        AWS_SECRET_ACCESS_KEY: 'S',
        AWS_SESSION_TOKEN: 'T',
      },
    ).exportBucket
    assert.deepEqual(aws, {
      bucket: 'b',
      region: 'eu-west-1',
      endpoint: undefined,
      pathStyle: false,
      prefix: '',
      accessKeyId: 'A',
      secretAccessKey: 'S',
      sessionToken: 'T',
    })
    assert.equal(
      loadConfig(
        {},
        {
          PROVENANT_EXPORT_S3_BUCKET: 'b',
          PROVENANT_EXPORT_S3_ENDPOINT: 'https://s3.example',
          PROVENANT_EXPORT_S3_PATH_STYLE: '0',
          AWS_ACCESS_KEY_ID: 'A',
          AWS_SECRET_ACCESS_KEY: 'S',
        },
      ).exportBucket?.pathStyle,
      false,
    )
  })

  it('refuses a bucket without credentials and an endpoint with a path, naming the setting', () => {
    assert.throws(() => loadConfig({}, { PROVENANT_EXPORT_S3_BUCKET: 'b' }), /PROVENANT_EXPORT_S3_ACCESS_KEY_ID/)
    assert.throws(
      () =>
        loadConfig(
          {},
          {
            PROVENANT_EXPORT_S3_BUCKET: 'b',
            AWS_ACCESS_KEY_ID: 'A',
            AWS_SECRET_ACCESS_KEY: 'S',
            PROVENANT_EXPORT_S3_ENDPOINT: 'http://minio:9000/bucket',
          },
        ),
      /PROVENANT_EXPORT_S3_ENDPOINT/,
    )
  })
})

describe('loadConfig: the columnar tier', () => {
  const on = (env: Record<string, string>) => loadConfig({ data: '/srv/provenant' }, { PROVENANT_COLUMNAR: 'on', ...env }).columnar!

  it('defaults: 1GB of memory, 4GB of spill space', () => {
    const columnar = on({})
    assert.equal(columnar.memoryLimit, '1GB')
    assert.equal(columnar.spillLimit, '4GB')
    assert.equal(on({ PROVENANT_COLUMNAR_SPILL: '20GB' }).spillLimit, '20GB')
    assert.throws(
      () => on({ PROVENANT_COLUMNAR_SPILL: 'lots' }),
      /PROVENANT_COLUMNAR_SPILL must be a size such as 4GB or 500GB, not "lots"/,
    )
  })

  it('takes a tail age from a second to a day (default a minute), and says the range otherwise', () => {
    assert.equal(on({}).tailAgeMs, 60_000)
    assert.equal(on({ PROVENANT_COLUMNAR_TAIL_AGE_MS: '1000' }).tailAgeMs, 1_000)
    assert.equal(on({ PROVENANT_COLUMNAR_TAIL_AGE_MS: '86400000' }).tailAgeMs, 86_400_000)
    for (const bad of ['999', '86400001', 'soon'])
      assert.throws(
        () => on({ PROVENANT_COLUMNAR_TAIL_AGE_MS: bad }),
        new RegExp(`PROVENANT_COLUMNAR_TAIL_AGE_MS must be a whole number from 1000 to 86400000, not "${bad}"`),
      )
  })

  it('refuses a memory limit compaction cannot work under, saying the minimum and why', () => {
    // 160 MB (two 80 MB CSV read buffers) + 80 bytes a row of a segment: 240MB for 1,000,000-row segments
    assert.throws(
      () => on({ PROVENANT_COLUMNAR_MEMORY: '64MB' }),
      /PROVENANT_COLUMNAR_MEMORY is 64MB; with PROVENANT_COLUMNAR_SEGMENT_ROWS at 1000000 it must be at least 240MB: compaction reads staged rows through an 80 MB buffer/,
    )
    assert.throws(() => on({ PROVENANT_COLUMNAR_MEMORY: '239MB' }), /at least 240MB/)
    assert.equal(on({ PROVENANT_COLUMNAR_MEMORY: '240MB' }).memoryLimit, '240MB')
    assert.equal(on({ PROVENANT_COLUMNAR_MEMORY: '0.25GiB' }).memoryLimit, '0.25GiB')
    assert.throws(() => on({ PROVENANT_COLUMNAR_MEMORY: '160MB', PROVENANT_COLUMNAR_SEGMENT_ROWS: '10000' }), /at least 161MB/)
    assert.equal(on({ PROVENANT_COLUMNAR_MEMORY: '161MB', PROVENANT_COLUMNAR_SEGMENT_ROWS: '10000' }).segmentRows, 10_000)
  })
})
