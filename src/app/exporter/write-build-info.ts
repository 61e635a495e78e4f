/** Build step (run after tsc): `node dist/app/exporter/write-build-info.js` records version, branch and revision. */
import { BUILD_INFO_FILE, writeBuildInfo } from './build-info.js';

const info = writeBuildInfo();
process.stdout.write(`${BUILD_INFO_FILE}: ${JSON.stringify(info)}\n`);
