/**
 * @module
 * The demo workspace's configuration: one push connection of plant sensors, a surface for line 1,
 * and warm queries a dashboard would use (a `timestamp` column and a metric column).
 */

export const DEMO_CONFIG = {
  workspace: 'demo',
  connections: [
    {
      lookup: 'plant-sensors',
      kind: 'push',
      table: 'SensorReadings',
      description: 'Temperature and pressure readings of the line sensors, pushed by the plant gateway.',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'sensor', type: 'string' },
        { name: 'line', type: 'string' },
        { name: 'temperature', type: 'real', description: 'degrees Celsius' },
        { name: 'pressure', type: 'real', description: 'bar' },
        { name: 'status', type: 'string' },
      ],
    },
  ],
  surfaces: [{ lookup: 'line-1', name: 'Line 1', connections: ['plant-sensors'] }],
  warmQueries: [
    {
      lookup: 'hourly-temperature',
      path: 'plant/line-1/hourly-temperature',
      description: 'Average temperature per hour over the last day, for the line 1 dashboard.',
      query: `SensorReadings
| where line == "line-1" and timestamp > ago(1d)
| summarize temperature = avg(temperature) by bin(timestamp, 1h)
| order by timestamp asc`,
    },
    {
      lookup: 'latest-by-sensor',
      description: 'The latest reading of every sensor.',
      query: 'SensorReadings\n| summarize arg_max(timestamp, *) by sensor\n| order by sensor asc',
    },
    {
      lookup: 'alarms',
      path: 'plant/alarms',
      description: 'Readings whose status is not ok, newest first.',
      query:
        'SensorReadings\n| where status != "ok"\n| project timestamp, sensor, line, temperature, pressure, status\n| order by timestamp desc\n| take 100',
    },
  ],
}
