/**
 * First names that people use for one another (docs/search.md, "Duplicates"): each group is one given name
 * and the short or familiar forms it is commonly written as, folded (lower case, no accents). Two first
 * names in one group count as the same first name for the duplicate rules. A name may sit in several
 * groups (`alex` is short for both Alexander and Alexandra).
 */
export const NICKNAME_GROUPS: readonly (readonly string[])[] = [
  ['robert', 'rob', 'robbie', 'bob', 'bobby', 'bert'],
  ['william', 'will', 'bill', 'billy', 'willy', 'liam'],
  ['elizabeth', 'liz', 'lizzie', 'beth', 'betty', 'eliza', 'elisa', 'libby'],
  ['katherine', 'catherine', 'kathryn', 'kate', 'katie', 'kathy', 'cathy', 'kat', 'kitty'],
  ['margaret', 'maggie', 'meg', 'peggy', 'marge', 'greta'],
  ['james', 'jim', 'jimmy', 'jamie'],
  ['john', 'jack', 'johnny', 'jon'],
  ['jonathan', 'jon', 'jonny', 'nathan'],
  ['michael', 'mike', 'mikey', 'mick', 'mickey'],
  ['richard', 'rick', 'ricky', 'rich', 'richie', 'dick'],
  ['thomas', 'tom', 'tommy'],
  ['christopher', 'chris', 'kit', 'topher'],
  ['christina', 'christine', 'chris', 'tina', 'chrissy'],
  ['daniel', 'dan', 'danny'],
  ['matthew', 'matt', 'matty'],
  ['anthony', 'tony'],
  ['joseph', 'joe', 'joey'],
  ['edward', 'ed', 'eddie', 'ted', 'teddy', 'ned'],
  ['alexander', 'alex', 'alec', 'sasha', 'xander'],
  ['alexandra', 'alex', 'alexa', 'sandra', 'sasha'],
  ['susan', 'sue', 'susie', 'suzy'],
  ['jennifer', 'jen', 'jenny'],
  ['patricia', 'pat', 'patty', 'trish', 'tricia'],
  ['patrick', 'pat', 'paddy'],
  ['deborah', 'debra', 'deb', 'debbie'],
  ['rebecca', 'becky', 'becca'],
  ['victoria', 'vicky', 'vicki', 'tori'],
  ['samuel', 'sam', 'sammy'],
  ['samantha', 'sam', 'sammie'],
  ['benjamin', 'ben', 'benny', 'benji'],
  ['nicholas', 'nick', 'nicky', 'nico'],
  ['andrew', 'andy', 'drew'],
  ['timothy', 'tim', 'timmy'],
  ['gregory', 'greg'],
  ['stephen', 'steven', 'steve', 'stevie'],
  ['francis', 'frank', 'frankie'],
  ['frances', 'fran', 'frannie'],
  ['francisco', 'paco', 'pancho', 'cisco'],
  ['jose', 'pepe'],
  ['dolores', 'lola'],
  ['guillermo', 'memo'],
  ['johannes', 'hans', 'jan'],
  ['wolfgang', 'wolf'],
  ['giuseppe', 'beppe', 'peppe'],
  ['aleksandr', 'sasha', 'sanya'],
  ['ekaterina', 'katya'],
  ['dmitri', 'dmitry', 'dima'],
  ['abigail', 'abby', 'gail'],
  ['kimberly', 'kim'],
  ['jessica', 'jess', 'jessie'],
  ['theodore', 'theo', 'ted', 'teddy'],
  ['charles', 'charlie', 'chuck', 'chas'],
  ['charlotte', 'lottie', 'charlie'],
  ['henry', 'harry', 'hank'],
  ['harold', 'harry', 'hal'],
  ['lawrence', 'larry'],
  ['leonard', 'leo', 'len', 'lenny'],
  ['raymond', 'ray'],
  ['ronald', 'ron', 'ronnie'],
  ['donald', 'don', 'donnie'],
  ['kenneth', 'ken', 'kenny'],
  ['dorothy', 'dot', 'dottie'],
  ['eleanor', 'ellie', 'nell', 'nora'],
  ['isabella', 'isabel', 'bella', 'izzy'],
  ['olivia', 'liv', 'livvy'],
  ['sophia', 'sophie', 'sofi'],
  ['zachary', 'zach', 'zack'],
  ['nathaniel', 'nate', 'nathan'],
  ['gabriel', 'gabe'],
  ['gabriella', 'gabrielle', 'gabby'],
  ['madeline', 'madeleine', 'maddie', 'maddy'],
  ['amanda', 'mandy'],
  ['cynthia', 'cindy'],
  ['pamela', 'pam'],
  ['josephine', 'jo', 'josie'],
  ['louise', 'lou', 'lulu'],
  ['louis', 'lou'],
  ['vincent', 'vince', 'vinny'],
  ['frederick', 'fred', 'freddie', 'fritz'],
  ['douglas', 'doug'],
  ['phillip', 'philip', 'phil'],
  ['peter', 'pete'],
  ['mathilde', 'tilde', 'tilly'],
];

/** Each folded first name's groups, by index in NICKNAME_GROUPS. */
const GROUPS_OF = new Map<string, number[]>();
NICKNAME_GROUPS.forEach((group, i) => {
  for (const name of group) GROUPS_OF.set(name, [...(GROUPS_OF.get(name) ?? []), i]);
});

/** Whether two folded first names are one name and its familiar form (or two forms of one name). */
export function sameNickname(a: string, b: string): boolean {
  if (a === b) return false;
  const groups = GROUPS_OF.get(a);
  return !!groups && (GROUPS_OF.get(b) ?? []).some((g) => groups.includes(g));
}
