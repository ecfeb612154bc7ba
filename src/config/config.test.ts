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
