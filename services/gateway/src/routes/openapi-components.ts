/**
 * Named schemas for the OpenAPI document: a route schema that carries a `title` (the protocol's
 * ExecResult, ErrorBody, …; SandboxFusion's RunCodeResponse, …) is moved to
 * `components.schemas.<title>` and referenced from where it was, so generated clients get one
 * named type for each shape instead of an anonymous copy per route.
 */

type Node = Record<string, unknown>

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Hoists the titled schemas of `doc.paths` into `doc.components.schemas` (innermost first, so a
 * named shape inside another is referenced too). Two schemas of one title that differ otherwise
 * than in their `description` stay inline; a description that differs from the component's
 * stays beside the `$ref`.
 */
export function hoistTitledSchemas(doc: Node): Node {
  const components = (isNode(doc.components) ? doc.components : {}) as Node
  const schemas = (isNode(components.schemas) ? components.schemas : {}) as Node
  const shapes = new Map<string, string>()
  for (const [name, schema] of Object.entries(schemas)) shapes.set(name, shapeOf(schema as Node))

  const visit = (value: unknown, inSchema: boolean): unknown => {
    if (Array.isArray(value)) return value.map((v) => visit(v, inSchema))
    if (!isNode(value)) return value
    const out: Node = {}
    for (const [key, child] of Object.entries(value)) {
      // `properties` and `patternProperties` map names to schemas: a property named `title` is not a title
      out[key] =
        key === 'example' || key === 'examples' || key === 'enum' || key === 'const' || key === 'default'
          ? child
          : visit(child, inSchema || key === 'schema')
    }
    const title = out.title
    if (!inSchema || typeof title !== 'string' || !/^[A-Za-z0-9._-]+$/.test(title)) return out
    const shape = shapeOf(out)
    const known = shapes.get(title)
    if (known === undefined) {
      shapes.set(title, shape)
      schemas[title] = out
    } else if (known !== shape) {
      return out
    }
    const ref: Node = { $ref: `#/components/schemas/${title}` }
    const description = out.description
    if (description !== undefined && description !== (schemas[title] as Node).description) ref.description = description
    return ref
  }
  const paths = visit(dropEchoedDescriptions(doc.paths), false)
  return { ...doc, paths, components: { ...components, schemas } }
}

/**
 * `@fastify/swagger` gives a response's description to the response and leaves it on its
 * schema too: the schema's copy is dropped, so a named schema is not described as one route's answer.
 */
function dropEchoedDescriptions(paths: unknown): unknown {
  const copy = structuredClone(paths) as Record<string, Record<string, { responses?: Record<string, Node> }>>
  for (const item of Object.values(copy ?? {})) {
    for (const op of Object.values(item)) {
      for (const response of Object.values(op.responses ?? {})) {
        const content = (isNode(response.content) ? response.content : {}) as Record<string, Node>
        for (const media of Object.values(content)) {
          if (isNode(media.schema) && media.schema.description === response.description) delete media.schema.description
        }
      }
    }
  }
  return copy
}

/** A schema's JSON without its top-level description: what makes two schemas of one title the same. */
function shapeOf(schema: Node): string {
  const { description: _d, ...rest } = schema
  return JSON.stringify(rest)
}
