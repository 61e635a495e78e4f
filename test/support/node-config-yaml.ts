/** The smallest node configuration file the agent accepts (passwords given, watchdog off): tests add or replace what they test. */
export const MINIMAL_NODE_YAML = `scope: demo
name: node1
restapi: {listen: 127.0.0.1:8008}
etcd3: {hosts: [127.0.0.1:2379]}
db:
  listen: 127.0.0.1:15432
  data_dir: /var/lib/warden/node1
  authentication: {superuser: {username: postgres, password: pw}, replication: {username: replicator, password: rpw}}
watchdog: {mode: off}
`;
