import { wholeDaysSince } from './deal.presenter';

describe('wholeDaysSince', () => {
  const start = new Date('2030-01-01T12:00:00Z');
  it('counts complete 24-hour periods', () => {
    expect(wholeDaysSince(start, new Date('2030-01-01T12:00:00Z'))).toBe(0);
    expect(wholeDaysSince(start, new Date('2030-01-02T11:59:59Z'))).toBe(0);
    expect(wholeDaysSince(start, new Date('2030-01-02T12:00:00Z'))).toBe(1);
    expect(wholeDaysSince(start, new Date('2030-01-16T13:00:00Z'))).toBe(15);
  });
  it('is never negative when clocks disagree slightly', () => {
    expect(wholeDaysSince(start, new Date('2030-01-01T11:59:59Z'))).toBe(0);
  });
});
