/**
 * The page of `GET /docs`: one self-contained HTML file (no scripts, styles or fonts from
 * anywhere) that loads `openapi.json` beside it and renders every operation by tag (method,
 * path, summary, security, parameters, request and response schemas, named schemas linked), with
 * a form to send each one from the browser (an API key field included). `/docs#operationId`
 * opens that operation.
 */

/** The page's HTML. */
export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>sandfleet API</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem 1.5rem 4rem; color: #1d2430; }
h1 { margin-bottom: .2rem; } h2 { margin-top: 2rem; border-bottom: 1px solid #d5dbe3; }
code, pre, textarea, input { font: 13px/1.4 ui-monospace, monospace; }
details.op { border: 1px solid #d5dbe3; border-radius: 6px; margin: .4rem 0; }
details.op > summary { cursor: pointer; padding: .45rem .7rem; display: flex; gap: .7rem; align-items: baseline; }
details.op[open] > summary { border-bottom: 1px solid #d5dbe3; background: #f6f8fa; }
.body { padding: .3rem 1rem 1rem; }
.method { font-weight: 700; min-width: 4.2rem; text-transform: uppercase; }
.get { color: #0a6cbd; } .post { color: #168a45; } .delete { color: #c0392b; }
.path { font-family: ui-monospace, monospace; font-weight: 600; }
.summary { color: #4a5566; flex: 1; } .lock { color: #8a6d00; font-size: 12px; } .deprecated { text-decoration: line-through; }
.schema { margin: .2rem 0 .2rem 1rem; } .prop { margin: .1rem 0; }
.type { color: #6f42c1; font-family: ui-monospace, monospace; } .req { color: #c0392b; font-size: 12px; }
.desc { color: #4a5566; } .status { font-weight: 700; font-family: ui-monospace, monospace; }
textarea { width: 100%; min-height: 8rem; box-sizing: border-box; }
pre.out { background: #f6f8fa; padding: .6rem; overflow: auto; max-height: 24rem; }
#key { width: 24rem; }
</style>
</head>
<body>
<h1 id="title">sandfleet API</h1>
<p id="about">Loading <a href="openapi.json">openapi.json</a>…</p>
<p><label>API key (sent as <code>Authorization: Bearer</code>): <input id="key" type="password" autocomplete="off"></label></p>
<div id="ops"></div>
<h2>Schemas</h2>
<div id="schemas"></div>
<script>
'use strict'
var doc
function el (tag, attrs, kids) {
  var e = document.createElement(tag)
  for (var k in (attrs || {})) { if (k === 'text') e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]) }
  for (var i = 0; kids && i < kids.length; i++) if (kids[i] != null) e.append(kids[i])
  return e
}
function refName (ref) { return ref.split('/').pop() }
function resolve (s) { return s && s.$ref ? doc.components.schemas[refName(s.$ref)] : s }
function typeText (s) {
  if (!s) return 'any'
  if (s.$ref) return refName(s.$ref)
  if (s.enum) return s.enum.map(function (v) { return JSON.stringify(v) }).join(' | ')
  if (s.anyOf || s.oneOf) return (s.anyOf || s.oneOf).map(typeText).join(' | ')
  var t = Array.isArray(s.type) ? s.type.join(' | ') : (s.type || 'any')
  if (t === 'array') return 'array of ' + typeText(s.items)
  if (t === 'object' && !s.properties && s.additionalProperties && typeof s.additionalProperties === 'object') return 'map of ' + typeText(s.additionalProperties)
  return t
}
function schemaView (s, depth) {
  var box = el('div', { class: 'schema' })
  if (!s) return box
  var line = el('div', {}, [s.$ref ? el('a', { href: '#schema-' + refName(s.$ref), class: 'type', text: refName(s.$ref) }) : el('span', { class: 'type', text: typeText(s) })])
  if (s.description) line.append(' ', el('span', { class: 'desc', text: '— ' + s.description }))
  box.append(line)
  // a named schema is linked; at the top of a request or response it is also shown
  if ((s.$ref && depth > 1) || depth > 6) return box
  var inner = s.type === 'array' ? s.items : s
  if (inner && inner.anyOf) inner = inner.anyOf.filter(function (x) { return x.properties || x.$ref })[0] || inner
  if (inner && inner.$ref) { if (depth > 1) return box; inner = resolve(inner) }
  var props = (inner && inner.properties) || {}
  var req = (inner && inner.required) || []
  Object.keys(props).forEach(function (name) {
    var p = props[name]
    var row = el('div', { class: 'prop' }, [el('code', { text: name }), req.indexOf(name) >= 0 ? el('span', { class: 'req', text: ' required' }) : null])
    row.append(schemaView(p, depth + 1))
    box.append(row)
  })
  return box
}
function example (s, name, depth) {
  s = resolve(s)
  if (!s || depth > 5) return null
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0]
  if (s.default !== undefined) return s.default
  if (s.enum) return s.enum[0]
  if (s.const !== undefined) return s.const
  if (s.anyOf) return example(s.anyOf[0], name, depth + 1)
  var t = Array.isArray(s.type) ? s.type[0] : s.type
  if (name === 'code' || name === 'solution') return 'print(6 * 7)'
  if (name === 'method') return 'tools/list'
  if (name === 'id') return 1
  if (t === 'object') {
    var o = {}
    ;(s.required || []).forEach(function (k) { o[k] = example((s.properties || {})[k], k, depth + 1) })
    return o
  }
  if (t === 'array') return name === 'cells' ? ['x = 6 * 7', 'x'] : (s.minItems ? [example(s.items, '', depth + 1)] : [])
  if (t === 'string') return ''
  if (t === 'number' || t === 'integer') return s.minimum !== undefined ? s.minimum : 1
  if (t === 'boolean') return false
  return null
}
// the body the form starts with: the request's own example (a JSON-RPC request with its id, a call naming its
// language), else one made from its schema
function bodyExample (media) {
  if (media.example !== undefined) return media.example
  var named = media.examples && Object.keys(media.examples)[0]
  if (named) return media.examples[named].value
  return example(media.schema, '', 0)
}
// the request the page sends for an operation: its URL (path parameters filled in), method, headers and body
function requestOf (path, method, op, params, body, key) {
  var url = '.' + path.replace(/\\{(\\w+)\\}/g, function (_m, n) { return encodeURIComponent(params[n]) })
  // an operation that may answer in server-sent events (MCP's) takes them only when asked for both
  var answers = (op.responses && op.responses['200'] && op.responses['200'].content) || {}
  var headers = { accept: answers['text/event-stream'] ? 'application/json, text/event-stream' : 'application/json' }
  if (key) headers.authorization = 'Bearer ' + key
  if (body != null) headers['content-type'] = 'application/json'
  return { url: url, init: { method: method.toUpperCase(), headers: headers, body: body != null ? body : undefined } }
}
function needsKey (op) {
  var sec = op.security || doc.security || []
  return sec.length > 0 && !sec.some(function (r) { return Object.keys(r).length === 0 })
}
function tryForm (path, method, op) {
  var box = el('div', {}, [el('h4', { text: 'Try it' })])
  var params = {}
  ;(op.parameters || []).filter(function (p) { return p.in === 'path' }).forEach(function (p) {
    params[p.name] = el('input', { placeholder: p.name })
    box.append(el('label', {}, [p.name + ': ', params[p.name]]), el('br'))
  })
  var media = op.requestBody && op.requestBody.content && op.requestBody.content['application/json']
  var body = null
  if (media) { body = el('textarea', {}); body.value = JSON.stringify(bodyExample(media), null, 2); box.append(body) }
  var out = el('pre', { class: 'out', text: '' })
  var send = el('button', { type: 'button', text: 'Send ' + method.toUpperCase() + ' ' + path })
  send.onclick = function () {
    var values = {}
    Object.keys(params).forEach(function (n) { values[n] = params[n].value })
    var req = requestOf(path, method, op, values, body ? body.value : null, document.getElementById('key').value)
    out.textContent = '…'
    fetch(req.url, req.init).then(function (res) {
      return res.text().then(function (text) {
        var shown = text
        try { shown = JSON.stringify(JSON.parse(text), null, 2) } catch (e) {}
        out.textContent = 'HTTP ' + res.status + ' ' + (res.headers.get('content-type') || '') + '\\n\\n' + shown
      })
    }).catch(function (err) { out.textContent = String(err) })
  }
  box.append(el('div', {}, [send]), out)
  return box
}
function operationView (path, method, op) {
  var d = el('details', { class: 'op', id: op.operationId || (method + path) })
  d.append(el('summary', {}, [
    el('span', { class: 'method ' + method, text: method }),
    el('span', { class: 'path' + (op.deprecated ? ' deprecated' : ''), text: path }),
    el('span', { class: 'summary', text: op.summary || '' }),
    needsKey(op) ? el('span', { class: 'lock', text: 'API key' }) : null
  ]))
  var b = el('div', { class: 'body' }, [el('p', {}, [el('span', { text: 'operationId ' }), el('code', { class: 'operation-id', text: op.operationId || '' })])])
  if (op.description) b.append(el('p', { class: 'desc', text: op.description }))
  if ((op.parameters || []).length) {
    b.append(el('h4', { text: 'Parameters' }))
    op.parameters.forEach(function (p) { b.append(el('div', { class: 'prop' }, [el('code', { text: p.name }), ' (' + p.in + (p.required ? ', required' : '') + ')', schemaView(p.schema, 1)])) })
  }
  if (op.requestBody) {
    b.append(el('h4', { text: 'Request body' }))
    Object.keys(op.requestBody.content || {}).forEach(function (mt) { b.append(el('div', {}, [el('code', { text: mt }), schemaView(op.requestBody.content[mt].schema, 1)])) })
  }
  b.append(el('h4', { text: 'Responses' }))
  Object.keys(op.responses || {}).forEach(function (code) {
    var r = op.responses[code]
    var row = el('div', { class: 'prop' }, [el('span', { class: 'status', text: code }), ' ', el('span', { class: 'desc', text: r.description || '' })])
    Object.keys(r.content || {}).forEach(function (mt) { row.append(el('div', { class: 'schema' }, [el('code', { text: mt }), schemaView(r.content[mt].schema, 1)])) })
    b.append(row)
  })
  b.append(tryForm(path, method, op))
  d.append(b)
  return d
}
function render () {
  document.title = doc.info.title + ' API ' + doc.info.version
  document.getElementById('title').textContent = doc.info.title + ' API ' + doc.info.version
  var about = document.getElementById('about')
  about.textContent = doc.info.description + ' '
  about.append(el('a', { href: 'openapi.json', text: 'openapi.json' }))
  var byTag = {}
  Object.keys(doc.paths).forEach(function (path) {
    Object.keys(doc.paths[path]).forEach(function (method) {
      var op = doc.paths[path][method]
      var tag = (op.tags && op.tags[0]) || 'other'
      ;(byTag[tag] = byTag[tag] || []).push(operationView(path, method, op))
    })
  })
  var order = (doc.tags || []).map(function (t) { return t.name })
  Object.keys(byTag).forEach(function (t) { if (order.indexOf(t) < 0) order.push(t) })
  var ops = document.getElementById('ops')
  order.forEach(function (t) {
    if (!byTag[t]) return
    var info = (doc.tags || []).filter(function (x) { return x.name === t })[0]
    ops.append(el('h2', { id: 'tag-' + t, text: t }))
    if (info && info.description) ops.append(el('p', { class: 'desc', text: info.description }))
    byTag[t].forEach(function (d) { ops.append(d) })
  })
  var schemas = document.getElementById('schemas')
  Object.keys((doc.components && doc.components.schemas) || {}).sort().forEach(function (name) {
    schemas.append(el('h3', { id: 'schema-' + name, text: name }), schemaView(Object.assign({}, doc.components.schemas[name], { title: undefined }), 0))
  })
  document.body.setAttribute('data-rendered', String(ops.querySelectorAll('details.op').length))
  var linked = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)))
  if (linked && linked.tagName === 'DETAILS') { linked.open = true; linked.scrollIntoView() }
}
fetch('openapi.json').then(function (r) { return r.json() }).then(function (d) { doc = d; render() })
  .catch(function (err) { document.getElementById('about').textContent = 'Could not load openapi.json: ' + err })
</script>
</body>
</html>
`
