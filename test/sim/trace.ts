import { TickPipeline } from '../../src/app/agent/tick-pipeline.js';

/** Prints every tick's decision (replay --verbose). */
export function traceTicks(): void {
  const tick = TickPipeline.prototype.run;
  const t0 = Date.UTC(2024, 0, 1);
  TickPipeline.prototype.run = async function (this: TickPipeline) {
    const r = await tick.call(this);
    // The trace reads the pipeline's parts from outside: a debugging aid, not an interface.
    const parts = this['parts'];
    const f = parts.local.facts;
    const cluster = parts.cluster.current.cluster;
    const sync = cluster?.sync ? ` sync=${cluster.sync.leader}:${cluster.sync.syncStandby.join('+')}` : '';
    console.log(
      `  t=${parts.snapshot.current.lastLoopAt - t0} ${parts.settings.current.node.name} [${f.state} ${f.inRecovery === false ? 'primary' : f.inRecovery ? 'replica' : '-'} tl=${f.timeline ?? '-'}${sync}] ` +
        `${r.decision.message} ${JSON.stringify(r.decision.actions.map((a) => a.type))}`,
    );
    return r;
  };
}
