#!/usr/bin/env python3
"""Import circles between the files (modules) of one crate: for each file,
which `crate::module` items it uses (items re-exported by lib.rs count for
their module; the crate root, test-only files and comments do not), then the
strongly connected groups. Usage: scripts/import_circles.py crates/hart/src"""
import re,os,sys
d=sys.argv[1]
files={}
for root,_,fs in os.walk(d):
    for f in fs:
        if f.endswith('.rs') and f not in ('tests.rs','ext_tests.rs','priv_tests.rs','fake_model.rs'):
            p=os.path.join(root,f); rel=os.path.relpath(p,d)[:-3]
            files[rel]=open(p).read()
top={k.split('/')[0] for k in files}
lib=files['lib']
reexp={}
for m,names in re.findall(r'pub use ([a-z_0-9]+)::\{?([^;}]*)\}?;',lib):
    for n in names.split(','):
        n=n.strip().split(' as ')[-1]
        if n: reexp[n]=m
def unit(rel): 
    return rel.split('/')[0] if rel!='lib' else 'lib'
g={}
for rel,s in files.items():
    u=unit(rel); g.setdefault(u,set())
    s='\n'.join(l for l in s.split('\n') if not l.lstrip().startswith('//'))
    i=s.find('#[cfg(test)]\nmod tests')
    if i>=0: s=s[:i]
    names=[]
    for grp in re.findall(r'crate::\{([^}]*)\}',s): names+= [x.strip().split('::')[0] for x in grp.split(',')]
    names+=re.findall(r'crate::([A-Za-z_0-9]+)',s)
    for n in names:
        if not n: continue
        if n in top: t=n
        elif n in reexp: t=reexp[n]
        else: t='lib'
        if t!=u: g[u].add(t)
idx={};low={};st=[];on=set();out=[];c=[0]
import sys; sys.setrecursionlimit(10000)
def sc(v):
    idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in g.get(v,()):
        if w not in idx: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        if len(comp)>1: out.append(sorted(comp))
for k in list(g):
    g[k]-= {"lib","rvnvmm_timing"}
g.pop("lib",None)
for v in sorted(g):
    if v not in idx: sc(v)
for m in sorted(g): print(m,'->',' '.join(sorted(g[m])))
print('import circles (strongly connected groups):',out)
