import { authorizationServersOf } from '../src/mcp/auth.ts';
import { mcpCors } from '../src/mcp/cors.ts';

describe("the authorization servers /mcp's metadata names", () => {
  const ours = 'https://kn.example.com/oauth';
  const company = 'https://login.example.com/realms/company';

  test('without single sign-on, the gateway alone', () => {
    expect(authorizationServersOf(ours, undefined, 'provider')).toEqual([ours]);
    expect(authorizationServersOf(ours, undefined, 'gateway')).toEqual([ours]);
  });

  test("with it, the company's provider first unless OIDC_MCP_FIRST=gateway; both always", () => {
    expect(authorizationServersOf(ours, company, 'provider')).toEqual([company, ours]);
    expect(authorizationServersOf(ours, company, 'gateway')).toEqual([ours, company]);
  });
});

describe('CORS of /mcp', () => {
  const run = (method: string) => {
    const headers: Record<string, string> = {};
    const res = {
      locals: {} as Record<string, unknown>,
      statusCode: 200,
      ended: false,
      set(values: Record<string, string>) {
        Object.assign(headers, values);
        return this;
      },
      status(code: number) {
        this.statusCode = code;
        return this;
      },
      end() {
        this.ended = true;
      },
    };
    let nexted = false;
    mcpCors({ method, baseUrl: '/mcp' } as never, res as never, () => {
      nexted = true;
    });
    return { headers, res, nexted };
  };

  test('a preflight is answered there and then, without credentials', () => {
    const { headers, res, nexted } = run('OPTIONS');
    expect(nexted).toBe(false);
    expect(res).toMatchObject({ statusCode: 204, ended: true });
    expect(headers['Access-Control-Allow-Origin']).toBe('*');
    expect(headers['Access-Control-Allow-Headers']).toMatch(/Authorization.*Content-Type.*Mcp-Protocol-Version.*Last-Event-ID/);
    expect(headers['Access-Control-Allow-Credentials']).toBeUndefined();
  });

  test('any other request goes on, with the headers a page must read exposed', () => {
    const { headers, nexted } = run('POST');
    expect(nexted).toBe(true);
    expect(headers['Access-Control-Expose-Headers']).toMatch(/WWW-Authenticate.*Mcp-Session-Id/);
  });
});
