import {
  companyNameKey,
  compareCompanyNames,
  compareNames,
  editDistance,
  foldName,
  jaroWinkler,
  probability,
  samePhone,
  similarWords,
} from './duplicate-evidence';

describe('duplicate evidence', () => {
  it('counts a transposition as one edit, and a transposed pair edited around as two', () => {
    expect(editDistance('fazoduma', 'faozduma')).toBe(1);
    expect(editDistance('henry', 'heyn')).toBe(2);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'ab')).toBe(2);
  });

  it('allows one typo from three letters and two from five, the first letter kept', () => {
    expect(similarWords('li', 'lu')).toBe(false);
    expect(similarWords('wei', 'wie')).toBe(true);
    expect(similarWords('smith', 'smuh')).toBe(true);
    expect(similarWords('novak', 'kovac')).toBe(false);
    expect(similarWords('mei', 'mroi')).toBe(false);
  });

  it('scores Jaro-Winkler as usual', () => {
    expect(jaroWinkler('martha', 'marhta')).toBeCloseTo(0.961, 3);
    expect(jaroWinkler('dwayne', 'duane')).toBeCloseTo(0.84, 2);
    expect(jaroWinkler('abc', 'xyz')).toBe(0);
  });

  it('folds accents, case, special letters and blanks', () => {
    expect(foldName('  Søren   STRAUß ')).toBe('soren strauss');
    expect(foldName('Łukasz Yılmaz')).toBe('lukasz yilmaz');
  });

  it('takes legal forms off company names', () => {
    expect(companyNameKey('Acme, Inc.')).toBe('acme');
    expect(companyNameKey('ACME Incorporated')).toBe('acme');
    expect(companyNameKey('Bendal Robotics G.m.b.H.')).toBe('bendal robotics');
    expect(companyNameKey('Co')).toBe('co');
    expect(compareCompanyNames('Sativiko Labs', 'Satviiko Labs Ltd').match).toBe('similar');
    expect(compareCompanyNames('Sativiko Labs', 'Sativiko Foods').match).toBe('different');
  });

  it('compares names straight and crosswise, with nicknames', () => {
    expect(compareNames({ first: 'robert', last: 'okonkwo' }, { first: 'bob', last: 'okonkwo' })).toMatchObject({ first: 'nickname', last: 'same' });
    expect(compareNames({ first: 'ada', last: 'lovelace' }, { first: 'lovelace', last: 'ada' })).toMatchObject({ first: 'same', last: 'same', swapped: true });
    expect(compareNames({ first: 'kwame', last: 'adeyemi' }, { first: 'margaret', last: 'adeyemi' })).toMatchObject({ first: 'different', last: 'same' });
  });

  it('matches a phone with or without country code and trunk 0', () => {
    expect(samePhone('+44 20 7946 0958', '020 7946 0958')).toBe(true);
    expect(samePhone('+1 (415) 555-0123', '415.555.0123')).toBe(true);
    expect(samePhone('+1 415 555 0123', '+1 415 555 0124')).toBe(false);
    expect(samePhone('555 0123', '555 0123')).toBe(true);
    expect(samePhone('12345', '12345')).toBe(false);
  });

  it('turns log-odds into a probability', () => {
    expect(probability(0)).toBe(0.5);
    expect(probability(3)).toBe(0.9526);
  });
});
