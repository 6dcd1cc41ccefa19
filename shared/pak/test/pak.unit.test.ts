import { expect } from 'chai';
import { generatePak, hashLongToken, hashPresentedPak, pakFromAuthorization } from '../src/index.ts';

describe('PAKs', () => {
  it('are minted in Brokkr format: brokkr_BR<6 base58>_<base58 of 24 bytes>', () => {
    const { pak, hash } = generatePak();
    expect(pak).to.match(/^brokkr_BR[1-9A-HJ-NP-Za-km-z]{6}_[1-9A-HJ-NP-Za-km-z]{30,34}$/);
    expect(hashPresentedPak(pak)).to.equal(hash);
  });

  it('hash only the long token, as Brokkr does (its published default admin PAK)', () => {
    expect(hashLongToken('GK3QN7CDUzYc6iKgMkJ98M2WSimM5t6U8')).to.equal('4c697273df3d764cba950bb5c04368097685f09259f5bd880d892cf1ff9f4cdd');
    expect(hashPresentedPak('brokkr_BR3rVsDa_GK3QN7CDUzYc6iKgMkJ98M2WSimM5t6U8')).to.equal(
      hashLongToken('GK3QN7CDUzYc6iKgMkJ98M2WSimM5t6U8'),
    );
    expect(hashPresentedPak('no-underscores')).to.equal(undefined);
    expect(hashPresentedPak('a_b_c_d')).to.equal(undefined);
  });

  it('are read from Bearer, bearer or bare Authorization values', () => {
    expect(pakFromAuthorization(' Bearer x_y_z ')).to.equal('x_y_z');
    expect(pakFromAuthorization('bearer x_y_z')).to.equal('x_y_z');
    expect(pakFromAuthorization('x_y_z')).to.equal('x_y_z');
  });
});
