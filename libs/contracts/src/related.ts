/** How one resource names another in `relationships` and `included`: `{type, id, name}`. */
export interface RelatedSummary {
  type: 'contact' | 'company' | 'deal' | 'pipeline' | 'stage' | 'user';
  id: string;
  name: string;
}
