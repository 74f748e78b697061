import { describe, expect, it } from 'vitest';
import { pushAccountJwt, type SystemRequester } from './revoke.js';

const answering = (reply: string): SystemRequester & { subjects: string[] } => {
  const subjects: string[] = [];
  return {
    subjects,
    request: (subject) => {
      subjects.push(subject);
      return Promise.resolve({ string: () => reply });
    },
  };
};
const account = { accountPublicKey: 'AABC', accountJwt: 'eyJ…' };

describe('pushAccountJwt', () => {
  it('sends the account JWT on the claims update subject and resolves on an accepted update', async () => {
    const nc = answering('{"data":{"account":"AABC","code":200,"message":"jwt updated"}}');
    await pushAccountJwt(nc, account);
    expect(nc.subjects).toEqual(['$SYS.REQ.ACCOUNT.AABC.CLAIMS.UPDATE']);
  });

  it("rejects with the server's reason when it refuses the update", async () => {
    const nc = answering('{"error":{"account":"AABC","code":500,"description":"jwt not trusted"}}');
    await expect(pushAccountJwt(nc, account)).rejects.toThrow('the server refused the account JWT: jwt not trusted');
  });
});
