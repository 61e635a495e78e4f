/**
 * The status page (`GET /ui`): one self-contained HTML document (no CDN, no other request
 * than this agent's own `ui/data` and `events`, both relative so the page works behind a
 * reverse proxy on a sub-path). It changes nothing: where an operator would act, it shows
 * the wardenctl command to run.
 */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Warden status</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:10px 16px;display:flex;gap:16px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:18px;margin:0}.muted{color:#8a93a6}main{padding:12px 16px;display:grid;gap:14px}
section{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:10px 12px}h2{font-size:15px;margin:0 0 8px}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eef0f4;white-space:nowrap}
th{font-weight:600;color:#4a5368}.leader td:first-child{font-weight:700}.badge{padding:1px 6px;border-radius:9px;font-size:12px;background:#e8ebf1}
.b-leader{background:#2f7d32;color:#fff}.b-sync_standby,.b-quorum_standby{background:#1565c0;color:#fff}.warn{color:#b26a00}.bad{color:#c62828}
code{background:#eef0f4;padding:1px 5px;border-radius:4px;font-size:12px}#events{max-height:320px;overflow:auto;font-family:ui-monospace,monospace;font-size:12px}
#events div{padding:2px 0;border-bottom:1px solid #f1f2f5}.ev-type{font-weight:600}svg text{font-size:12px}
</style></head><body>
<header><h1>Warden</h1><span id="scope"></span><span id="leader"></span><span id="pause"></span><span id="sched"></span><span class="muted" id="updated"></span></header>
<main>
<section><h2>Members</h2><table><thead><tr><th>Member</th><th>Role</th><th>State</th><th>TL</th><th>Lag (bytes)</th><th>Lag (s)</th><th>Lag, last minutes</th><th>Tags</th><th>Pending restart</th><th>Not eligible because</th></tr></thead><tbody id="members"></tbody></table></section>
<section><h2>Topology</h2><div id="topology"></div></section>
<section><h2>What you can do</h2><div id="actions"></div></section>
<section><h2>Events</h2><div id="events"></div></section>
</main>
<script>
(function(){
var base=location.pathname.replace(/\\/ui\\/?$/,'/');
function url(p){return base+p}
var hist={},lastData=null,conf='';
function esc(s){return String(s==null?'':s).replace(/[&<>"]/g,function(c){return{'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]})}
function el(id){return document.getElementById(id)}
function spark(v){if(!v||v.length<2)return'';var w=120,h=22,max=Math.max.apply(null,v.concat([1]));var pts=v.map(function(x,i){return(i*w/(v.length-1)).toFixed(1)+','+(h-1-(x/max)*(h-2)).toFixed(1)}).join(' ');return'<svg width="'+w+'" height="'+h+'"><polyline fill="none" stroke="#1565c0" stroke-width="1.5" points="'+pts+'"/></svg>'}
function render(d){
 lastData=d;var c=d.cluster||{members:[]};conf=d.ctl||'';
 el('scope').textContent='cluster '+(c.scope||'');
 var leader=(c.members||[]).filter(function(m){return m.role==='leader'||m.role==='standby_leader'})[0];
 el('leader').innerHTML='leader: <b id="leader-name">'+esc(leader?leader.name:'none')+'</b>';
 el('pause').innerHTML=c.pause?'<span class="warn">maintenance mode (paused)</span>':'';
 el('sched').innerHTML=c.scheduled_switchover?'scheduled switchover at '+esc(c.scheduled_switchover.at)+' from '+esc(c.scheduled_switchover.from)+' to '+esc(c.scheduled_switchover.to||'any'):'';
 el('updated').textContent='updated '+new Date(d.now).toLocaleTimeString();
 var rows='';(c.members||[]).forEach(function(m){
  var n=(d.nodes||{})[m.name]||null,lag=m.lag,secs='';
  if(n&&n.xlog&&n.xlog.replayed_timestamp&&typeof lag==='number'&&lag>0)secs=Math.max(0,Math.round((d.now-Date.parse(n.xlog.replayed_timestamp))/1000));else if(m.role!=='leader')secs=typeof lag==='number'?0:'';
  var h=hist[m.name]=(hist[m.name]||[]);if(m.role!=='leader'&&typeof lag==='number'){h.push(lag);if(h.length>150)h.shift()}
  var tags=m.tags?Object.keys(m.tags).map(function(k){return k+'='+m.tags[k]}).join(' '):'';
  var ne=n&&n.not_eligible?n.not_eligible.map(function(r){return r.detail}).join('; '):'';
  rows+='<tr class="'+(m.role==='leader'?'leader':'')+'" data-member="'+esc(m.name)+'" data-role="'+esc(m.role)+'"><td>'+esc(m.name)+'</td><td><span class="badge b-'+esc(m.role)+'">'+esc(m.role)+'</span></td><td class="'+(m.state==='running'?'':'warn')+'">'+esc(m.state)+'</td><td>'+esc(m.timeline)+'</td><td>'+esc(m.role==='leader'?'':m.lag)+'</td><td>'+esc(secs)+'</td><td>'+(m.role==='leader'?'':spark(h))+'</td><td>'+esc(tags)+'</td><td>'+(m.pending_restart?'<span class="warn">yes</span>':'')+(m.scheduled_restart?' scheduled '+esc(m.scheduled_restart.schedule):'')+'</td><td class="muted">'+esc(ne)+'</td></tr>'});
 el('members').innerHTML=rows;topology(c,leader);actions(c,leader);
 (d.events||[]).slice().sort(function(a,b){return a.time<b.time?-1:a.time>b.time?1:0}).forEach(addEvent);
}
function topology(c,leader){
 var ms=c.members||[];if(!ms.length){el('topology').textContent='no members';return}
 var up={};ms.forEach(function(m){if(leader&&m.name!==leader.name)up[m.name]=m.upstream||leader.name});
 var depth={};function dep(n,k){if(k>10)return 0;return up[n]?1+dep(up[n],k+1):0}
 var cols={};ms.forEach(function(m){var d=dep(m.name,0);depth[m.name]=d;(cols[d]=cols[d]||[]).push(m.name)});
 var pos={},W=170,H=40,maxRows=0;Object.keys(cols).forEach(function(d){cols[d].forEach(function(n,i){pos[n]={x:10+d*W,y:10+i*H}});maxRows=Math.max(maxRows,cols[d].length)});
 var s='<svg width="'+(Object.keys(cols).length*W+20)+'" height="'+(maxRows*H+20)+'">';
 Object.keys(up).forEach(function(n){var a=pos[up[n]],b=pos[n];if(a&&b)s+='<line x1="'+(a.x+120)+'" y1="'+(a.y+14)+'" x2="'+b.x+'" y2="'+(b.y+14)+'" stroke="#8a93a6"/>'});
 ms.forEach(function(m){var p=pos[m.name];s+='<rect x="'+p.x+'" y="'+p.y+'" width="120" height="28" rx="5" fill="'+(m.role==='leader'?'#2f7d32':'#e8ebf1')+'"/><text x="'+(p.x+8)+'" y="'+(p.y+18)+'" fill="'+(m.role==='leader'?'#fff':'#1d2330')+'">'+esc(m.name)+' ('+esc(m.role)+')</text>'});
 el('topology').innerHTML=s+'</svg><div class="muted">arrows: who streams from whom (a cascading replica from its replicatefrom member while that one runs)</div>';
}
function actions(c,leader){
 var a=[],p='wardenctl '+conf;
 if(leader)a.push('Switch over: <code>'+esc(p+'switchover --leader '+leader.name+' --dry-run')+'</code> then without <code>--dry-run</code>');
 a.push(c.pause?'Resume automatic failover: <code>'+esc(p+'resume --wait')+'</code>':'Maintenance mode: <code>'+esc(p+'pause --wait')+'</code>');
 (c.members||[]).forEach(function(m){if(m.pending_restart)a.push('Apply the pending restart of '+esc(m.name)+': <code>'+esc(p+'restart '+m.name+' --pending')+'</code>');if(/failed|crashed|stopped/.test(m.state)&&m.role!=='leader')a.push(esc(m.name)+' is '+esc(m.state)+': <code>'+esc(p+'reinit '+m.name)+'</code> rebuilds it')});
 if(c.scheduled_switchover)a.push('Cancel the scheduled switchover: <code>'+esc(p+'flush switchover')+'</code>');
 a.push('Follow the events: <code>'+esc(p+'events -f')+'</code>');
 el('actions').innerHTML=a.map(function(x){return'<div>'+x+'</div>'}).join('');
}
var seen={};
function addEvent(e){var k=e.member+'|'+e.id;if(seen[k])return;seen[k]=1;var box=el('events');var div=document.createElement('div');div.setAttribute('data-type',e.type);var ms=e.data&&typeof e.data.duration_ms==='number'?' ('+e.data.duration_ms+' ms)':'';
 div.innerHTML=esc(e.time.replace('T',' ').replace('Z',''))+' <b>'+esc(e.member)+'</b> <span class="ev-type">'+esc(e.type)+'</span> '+esc(e.reason)+esc(ms);
 box.insertBefore(div,box.firstChild);while(box.childNodes.length>300)box.removeChild(box.lastChild)}
function poll(){fetch(url('ui/data'),{credentials:'same-origin',cache:'no-store'}).then(function(r){if(!r.ok)throw new Error('HTTP '+r.status);return r.json()}).then(render).catch(function(e){el('updated').innerHTML='<span class="bad">'+esc(e.message)+'</span>'}).then(function(){setTimeout(poll,500)})}
poll();
if(window.EventSource){var es=new EventSource(url('events'));es.onmessage=function(m){try{addEvent(JSON.parse(m.data))}catch(e){}}}
})();
</script></body></html>
`;
